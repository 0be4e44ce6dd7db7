#include "cuda_timer.hpp"

#include <stdexcept>

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA

namespace {
cudaEvent_t event(void* e) {
  return static_cast<cudaEvent_t>(e);
}
}  // namespace

cuda_timer::cuda_timer(void* stream) : stream_(stream) {
  cudaEvent_t a = nullptr, b = nullptr;
  check_cuda(cudaEventCreate(&a), "cudaEventCreate");
  if (const cudaError_t e = cudaEventCreate(&b); e != cudaSuccess) {
    cudaEventDestroy(a);
    check_cuda(e, "cudaEventCreate");
  }
  start_ = a;
  stop_ = b;
}

cuda_timer::~cuda_timer() {
  cudaEventDestroy(event(start_));
  cudaEventDestroy(event(stop_));
}

void cuda_timer::start() {
  check_cuda(cudaEventRecord(event(start_), static_cast<cudaStream_t>(stream_)), "cudaEventRecord");
}

double cuda_timer::stop_ms() {
  check_cuda(cudaEventRecord(event(stop_), static_cast<cudaStream_t>(stream_)), "cudaEventRecord");
  check_cuda(cudaEventSynchronize(event(stop_)), "cudaEventSynchronize");
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, event(start_), event(stop_)), "cudaEventElapsedTime");
  return ms;
}

#else

cuda_timer::cuda_timer(void* stream) : stream_(stream) {
  throw std::runtime_error("glabench was built without CUDA");
}
cuda_timer::~cuda_timer() = default;
void cuda_timer::start() {}
double cuda_timer::stop_ms() {
  return 0;
}

#endif

}  // namespace glabench
