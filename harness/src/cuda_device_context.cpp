// The CUDA side of device_context, through the CUDA runtime API only (no nvcc needed).
// Built as a stub that reports "no CUDA" when glabench is configured without CUDA.
#include <stdexcept>
#include <string>

#include "device_context.hpp"

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA
namespace {

class cuda_context final : public device_context {
 public:
  explicit cuda_context(int device_id) : device_id_(device_id) {
    check_cuda(cudaSetDevice(device_id), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~cuda_context() override {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  DLDevice device() const override { return {kDLCUDA, device_id_}; }
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, bytes),
               ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
    return p;
  }
  void release(void* ptr) noexcept override { cudaFree(ptr); }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync H2D");
    synchronize();
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync D2H");
    synchronize();
  }
  void copy_rows_to_host(void* dst, const void* src, size_t row_bytes, size_t rows,
                         size_t src_pitch) override {
    check_cuda(cudaMemcpy2DAsync(dst, row_bytes, src, src_pitch, row_bytes, rows,
                                 cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpy2DAsync D2H");
    synchronize();
  }
  void fill(void* dst, unsigned char byte, size_t bytes) override {
    check_cuda(cudaMemsetAsync(dst, byte, bytes, stream_), "cudaMemsetAsync");
  }
  void* stream() override { return stream_; }
  void synchronize() override {
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  int device_id_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<device_context> make_cuda_context(int device_id) {
  return std::make_unique<cuda_context>(device_id);
}

namespace {

// Why cudaGetDeviceCount found no device, in the words a user needs: on a machine without
// an NVIDIA driver the CUDA runtime says "CUDA driver version is insufficient for CUDA
// runtime version", which reads like a version problem.
std::string no_device_reason(cudaError_t status) {
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    dlclose(driver);
  } else {
    return "no CUDA device (no NVIDIA driver here: libcuda.so.1 cannot be loaded)";
  }
  if (status == cudaErrorNoDevice) return "no CUDA device on this machine";
  return std::string("no usable CUDA device: ") + cudaGetErrorString(status);
}

}  // namespace

int cuda_device_count(std::string* reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (reason) *reason = no_device_reason(status);
    cudaGetLastError();  // clear the sticky error so later calls are not poisoned
    return 0;
  }
  if (count == 0 && reason) *reason = "no CUDA device on this machine";
  return count;
}

#else

std::unique_ptr<device_context> make_cuda_context(int) {
  throw std::runtime_error("glabench was built without CUDA");
}

int cuda_device_count(std::string* reason) {
  if (reason) *reason = "glabench was built without CUDA";
  return 0;
}

#endif

}  // namespace glabench
