#include "peak_rates.hpp"

#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cpu_timer.hpp"
#include "cublas_peaks.hpp"
#include "cuda_timer.hpp"
#include "device_context.hpp"
#include "statistics.hpp"

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

measured_peaks measure_host_peaks() {
  measured_peaks peaks;
  const size_t bytes = 256u << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::vector<double> ms;
  for (int i = 0; i < 6; ++i) {
    cpu_timer timer;
    timer.start();
    std::memcpy(b.data(), a.data(), bytes);
    ms.push_back(timer.stop_ms());
    std::swap(a, b);
  }
  peaks.copy_gbps = 2.0 * double(bytes) / (quantile(ms, 0.5) * 1e6);
  peaks.notes =
      "host: single-threaded memcpy of 256 MiB, median of 6, read+write bytes; "
      "no GEMM peak on the host (no BLAS)";
  return peaks;
}

#if GLABENCH_WITH_CUDA

measured_peaks measure_cuda_peaks(int device_id) {
  measured_peaks peaks;
  auto ctx = make_cuda_context(device_id);
  auto stream = static_cast<cudaStream_t>(ctx->stream());
  {
    const size_t bytes = size_t(1) << 30;
    device_buffer a(*ctx, bytes), b(*ctx, bytes);
    check_cuda(cudaMemsetAsync(a.data(), 0x3f, bytes, stream), "cudaMemset");
    cuda_timer timer(stream);
    const double ms =
        quantile(time_repeatedly(timer, 2, 10,
                                 [&] {
                                   check_cuda(cudaMemcpyAsync(b.data(), a.data(), bytes,
                                                              cudaMemcpyDeviceToDevice, stream),
                                              "cudaMemcpyAsync D2D");
                                 }),
                 0.5);
    peaks.copy_gbps = 2.0 * double(bytes) / (ms * 1e6);
  }
  peaks.notes =
      "copy: cudaMemcpyAsync device-to-device of 1 GiB, median of 10, read+write "
      "bytes; gemm: cublasGemmEx 8192³ (bf16/fp16 in, fp32 compute), median of 5";
  peaks.gemm_tflops = measure_gemm_tflops(*ctx, peaks.notes);
  return peaks;
}

#else

measured_peaks measure_cuda_peaks(int) {
  throw std::runtime_error("glabench was built without CUDA");
}

#endif

}  // namespace glabench
