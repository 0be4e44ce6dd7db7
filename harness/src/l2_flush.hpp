// Evicts what the last call left in a GPU's L2 cache, so that each timed sample starts
// cold as it would in a model, where other layers' data pass through the cache between
// calls: a memset of a buffer the size of the L2 cache (at least 1 MiB), enqueued on the
// timed stream before the sample's start event. Each flush writes a new byte value, so
// no flush is a no-op the driver could skip.
//
// The stream is a cudaStream_t passed as void*; without CUDA the constructor throws.
#pragma once

#include <cstddef>

namespace glabench {

class l2_flush {
 public:
  l2_flush(int device_id, void* stream);
  ~l2_flush();
  l2_flush(const l2_flush&) = delete;
  l2_flush& operator=(const l2_flush&) = delete;

  void flush();  // enqueues the memset on the stream
  size_t bytes() const { return bytes_; }

 private:
  void* stream_;
  void* buffer_ = nullptr;
  size_t bytes_ = 0;
  unsigned char fill_ = 0;
};

}  // namespace glabench
