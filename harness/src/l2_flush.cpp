#include "l2_flush.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA

struct l2_flush::other_device {
  int device = 0;
  void* buffer = nullptr;
  size_t bytes = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t flushed = nullptr;  // recorded on `stream` after its memset
};

namespace {

// Sets the current device for a scope and puts the previous one back.
class device_scope {
 public:
  device_scope() { cudaGetDevice(&previous_); }  // (on failure: device 0)
  ~device_scope() { cudaSetDevice(previous_); }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;
  void use(int device) { check_cuda(cudaSetDevice(device), "cudaSetDevice"); }

 private:
  int previous_ = 0;
};

// A buffer the size of the device's L2 cache (at least 1 MiB), on the current device.
void* l2_sized_buffer(int device_id, size_t* bytes) {
  int l2 = 0;
  check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_id), "L2 cache size");
  *bytes = size_t(std::max(l2, 1 << 20));
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, *bytes),
             ("cudaMalloc of " + std::to_string(*bytes) + " bytes on device " +
              std::to_string(device_id) + " (L2 flush)")
                 .c_str());
  return p;
}

}  // namespace

l2_flush::l2_flush(int device_id, void* stream)
    : l2_flush(std::vector<int32_t>{device_id}, stream) {}

l2_flush::l2_flush(const std::vector<int32_t>& device_ids, void* stream) : stream_(stream) {
  if (device_ids.empty()) throw std::invalid_argument("l2_flush: no device");
  first_device_ = device_ids[0];
  device_scope scope;
  try {
    scope.use(first_device_);
    buffer_ = l2_sized_buffer(first_device_, &bytes_);
    if (device_ids.size() > 1) {
      cudaEvent_t e = nullptr;
      check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
      enqueued_ = e;
    }
    for (size_t i = 1; i < device_ids.size(); ++i) {
      others_.push_back({device_ids[i]});
      other_device& d = others_.back();
      scope.use(d.device);
      d.buffer = l2_sized_buffer(d.device, &d.bytes);
      check_cuda(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check_cuda(cudaEventCreateWithFlags(&d.flushed, cudaEventDisableTiming), "cudaEventCreate");
    }
  } catch (...) {
    free_all();
    throw;
  }
}

void l2_flush::free_all() noexcept {
  device_scope scope;
  for (other_device& d : others_) {
    cudaSetDevice(d.device);
    if (d.stream) cudaStreamSynchronize(d.stream);
    if (d.flushed) cudaEventDestroy(d.flushed);
    if (d.stream) cudaStreamDestroy(d.stream);
    if (d.buffer) cudaFree(d.buffer);
  }
  others_.clear();
  cudaSetDevice(first_device_);
  if (enqueued_) cudaEventDestroy(static_cast<cudaEvent_t>(enqueued_));
  if (buffer_) cudaFree(buffer_);
  enqueued_ = buffer_ = nullptr;
}

l2_flush::~l2_flush() {
  free_all();
}

void l2_flush::flush() {
  const auto timed = static_cast<cudaStream_t>(stream_);
  ++fill_;
  if (others_.empty()) {
    check_cuda(cudaMemsetAsync(buffer_, fill_, bytes_, timed), "L2 flush memset");
    return;
  }
  const auto enqueued = static_cast<cudaEvent_t>(enqueued_);
  device_scope scope;
  scope.use(first_device_);
  check_cuda(cudaMemsetAsync(buffer_, fill_, bytes_, timed), "L2 flush memset");
  check_cuda(cudaEventRecord(enqueued, timed), "cudaEventRecord (L2 flush)");
  for (other_device& d : others_) {
    scope.use(d.device);
    check_cuda(cudaStreamWaitEvent(d.stream, enqueued, 0), "cudaStreamWaitEvent (L2 flush)");
    check_cuda(cudaMemsetAsync(d.buffer, fill_, d.bytes, d.stream),
               ("L2 flush memset on device " + std::to_string(d.device)).c_str());
    check_cuda(cudaEventRecord(d.flushed, d.stream), "cudaEventRecord (L2 flush)");
  }
  scope.use(first_device_);
  for (other_device& d : others_)
    check_cuda(cudaStreamWaitEvent(timed, d.flushed, 0), "cudaStreamWaitEvent (L2 flush)");
}

#else

struct l2_flush::other_device {};

l2_flush::l2_flush(int, void* stream) : stream_(stream) {
  throw std::runtime_error("glabench was built without CUDA");
}
l2_flush::l2_flush(const std::vector<int32_t>&, void* stream) : stream_(stream) {
  throw std::runtime_error("glabench was built without CUDA");
}
l2_flush::~l2_flush() = default;
void l2_flush::free_all() noexcept {}
void l2_flush::flush() {}

#endif

}  // namespace glabench
