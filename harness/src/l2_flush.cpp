#include "l2_flush.hpp"

#include <algorithm>
#include <stdexcept>

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA

l2_flush::l2_flush(int device_id, void* stream) : stream_(stream) {
  int l2 = 0;
  check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_id), "L2 cache size");
  bytes_ = size_t(std::max(l2, 1 << 20));
  check_cuda(cudaMalloc(&buffer_, bytes_),
             ("cudaMalloc of " + std::to_string(bytes_) + " bytes (L2 flush)").c_str());
}

l2_flush::~l2_flush() {
  cudaFree(buffer_);
}

void l2_flush::flush() {
  check_cuda(cudaMemsetAsync(buffer_, ++fill_, bytes_, static_cast<cudaStream_t>(stream_)),
             "L2 flush memset");
}

#else

l2_flush::l2_flush(int, void* stream) : stream_(stream) {
  throw std::runtime_error("glabench was built without CUDA");
}
l2_flush::~l2_flush() = default;
void l2_flush::flush() {}

#endif

}  // namespace glabench
