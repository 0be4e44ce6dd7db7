#include "cublas_peaks.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_timer.hpp"
#include "statistics.hpp"

#if GLABENCH_WITH_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA
namespace {

// cuBLAS's few entry points used, from the library opened at run time.
struct cublas_api {
  void* lib = nullptr;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  using gemm_ex = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                     int, const void*, const void*, cudaDataType, int, const void*,
                                     cudaDataType, int, const void*, void*, cudaDataType, int,
                                     cublasComputeType_t, cublasGemmAlgo_t);
  gemm_ex gemm = nullptr;
  std::string error;

  cublas_api() {
    std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* dir = std::getenv(env))
        names.push_back(std::string(dir) + "/lib64/libcublas.so");
    names.push_back("/usr/local/cuda/lib64/libcublas.so");
    for (const auto& n : names)
      if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      error = "cuBLAS not found (tried libcublas.so.13, .12, CUDA_HOME, /usr/local/cuda)";
      return;
    }
    create = reinterpret_cast<decltype(create)>(dlsym(lib, "cublasCreate_v2"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(lib, "cublasDestroy_v2"));
    set_stream = reinterpret_cast<decltype(set_stream)>(dlsym(lib, "cublasSetStream_v2"));
    gemm = reinterpret_cast<decltype(gemm)>(dlsym(lib, "cublasGemmEx"));
    if (!create || !destroy || !set_stream || !gemm) error = "cuBLAS lacks cublasGemmEx et al.";
  }
  ~cublas_api() {
    if (lib) dlclose(lib);
  }
  cublas_api(const cublas_api&) = delete;
  cublas_api& operator=(const cublas_api&) = delete;
};

struct gemm_kind {
  const char* name;
  cudaDataType_t type;
  cublasComputeType_t compute;
  size_t bytes;
};
constexpr gemm_kind kGemmKinds[] = {{"fp64", CUDA_R_64F, CUBLAS_COMPUTE_64F, 8},
                                    {"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, 4},
                                    {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2},
                                    {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2}};

// TFLOP/s of an n×n×n GEMM (n = 8192) in one dtype, median of 5 after 2 warm-ups.
double gemm_tflops(const cublas_api& api, cublasHandle_t handle, device_context& ctx,
                   const gemm_kind& kind) {
  const int n = 8192;
  const size_t bytes = size_t(n) * n * kind.bytes;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  device_buffer a(ctx, bytes), b(ctx, bytes), c(ctx, bytes);
  // 0x3f bytes: a finite, non-zero value in every one of these dtypes, small enough
  // that an n-long dot product stays finite in fp16.
  check_cuda(cudaMemsetAsync(a.data(), 0x3f, bytes, stream), "cudaMemset");
  check_cuda(cudaMemsetAsync(b.data(), 0x3f, bytes, stream), "cudaMemset");
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;
  const bool f64 = kind.compute == CUBLAS_COMPUTE_64F;
  cuda_timer timer(stream);
  const double ms = quantile(
      time_repeatedly(
          timer, 2, 5,
          [&] {
            const cublasStatus_t status =
                api.gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
                         f64 ? static_cast<const void*>(&one) : &onef, a.data(), kind.type, n,
                         b.data(), kind.type, n, f64 ? static_cast<const void*>(&zero) : &zerof,
                         c.data(), kind.type, n, kind.compute, CUBLAS_GEMM_DEFAULT);
            if (status != CUBLAS_STATUS_SUCCESS)
              throw std::runtime_error("cublasGemmEx failed with status " + std::to_string(status));
          }),
      0.5);
  return 2.0 * double(n) * n * n / (ms * 1e9);
}

}  // namespace

nlohmann::json measure_gemm_tflops(device_context& ctx, std::string& notes) {
  nlohmann::json tflops = nlohmann::json::object();
  cublas_api api;
  if (!api.error.empty()) {
    notes += "; no GEMM peak: " + api.error;
    return tflops;
  }
  cublasHandle_t handle = nullptr;
  if (api.create(&handle) != CUBLAS_STATUS_SUCCESS) {
    notes += "; no GEMM peak: cublasCreate failed";
    return tflops;
  }
  api.set_stream(handle, static_cast<cudaStream_t>(ctx.stream()));
  for (const gemm_kind& kind : kGemmKinds) {
    try {
      tflops[kind.name] = gemm_tflops(api, handle, ctx, kind);
    } catch (const std::exception& e) {
      notes += fmt::format("; no {} GEMM peak: {}", kind.name, e.what());
    }
  }
  api.destroy(handle);
  return tflops;
}

#else

nlohmann::json measure_gemm_tflops(device_context&, std::string& notes) {
  notes += "; no GEMM peak: glabench was built without CUDA";
  return nlohmann::json::object();
}

#endif

}  // namespace glabench
