// Where a backend's tensors live: host memory for CPU backends, one CUDA device (with
// its own stream) for CUDA backends. The harness owns every allocation (docs/design.md §3).
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <memory>
#include <string>

namespace glabench {

class device_context {
 public:
  virtual ~device_context() = default;
  virtual DLDevice device() const = 0;
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* ptr) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  // `rows` runs of `row_bytes` each, `src_pitch` bytes apart on the device, packed
  // one after another on the host (one head of a [B,T,H,X] tensor).
  virtual void copy_rows_to_host(void* dst, const void* src, size_t row_bytes, size_t rows,
                                 size_t src_pitch) = 0;
  // Sets `bytes` bytes at dst to `byte`: enqueued on the stream (CUDA), at once (host).
  virtual void fill(void* dst, unsigned char byte, size_t bytes) = 0;
  virtual void* stream() = 0;  // the cudaStream_t handed to backends; nullptr on the host
  virtual void synchronize() = 0;
};

// An owned allocation in a device_context.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(device_context& ctx, size_t bytes)
      : ctx_(&ctx), bytes_(bytes), ptr_(bytes ? ctx.allocate(bytes) : nullptr) {}
  device_buffer(device_buffer&& o) noexcept { *this = std::move(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(ctx_, o.ctx_);
    std::swap(bytes_, o.bytes_);
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  ~device_buffer() {
    if (ptr_) ctx_->release(ptr_);
  }
  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  device_context* ctx_ = nullptr;
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

std::unique_ptr<device_context> make_host_context();

// Throws std::runtime_error when glabench was built without CUDA or the device is
// absent.
std::unique_ptr<device_context> make_cuda_context(int device_id);

// Number of CUDA devices usable now; 0 with the reason when none is (no driver, no
// GPU, or glabench built without CUDA).
int cuda_device_count(std::string* reason);

}  // namespace glabench
