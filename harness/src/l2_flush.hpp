// Evicts what the last call left in a GPU's L2 cache, so that each timed sample starts
// cold as it would in a model, where other layers' data pass through the cache between
// calls: a memset of a buffer the size of the L2 cache (at least 1 MiB), enqueued on the
// timed stream before the sample's start event. Each flush writes a new byte value, so
// no flush is a no-op the driver could skip.
//
// A multi-device backend's call runs on every listed device, so each of their caches is
// flushed (docs/design.md §6): the first device's on the timed stream, every other's on
// a stream of its own that waits for what the timed stream has enqueued (the previous
// sample's work on that device included, by the multi-device contract of §3), and the
// timed stream waits for those memsets. The sample's start event, recorded next on the
// timed stream, then follows every flush.
//
// The stream is a cudaStream_t passed as void*; without CUDA the constructor throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace glabench {

class l2_flush {
 public:
  // One device: `stream` is on it.
  l2_flush(int device_id, void* stream);
  // Every device in `device_ids` (no repeats): `stream` is on device_ids[0]. Leaves the
  // current CUDA device as it found it.
  l2_flush(const std::vector<int32_t>& device_ids, void* stream);
  ~l2_flush();
  l2_flush(const l2_flush&) = delete;
  l2_flush& operator=(const l2_flush&) = delete;

  void flush();  // enqueues the memsets; the timed stream waits for all of them
  size_t bytes() const { return bytes_; }  // on the first device

 private:
  struct other_device;  // a further device's buffer, stream and event
  void free_all() noexcept;

  void* stream_;
  void* buffer_ = nullptr;
  size_t bytes_ = 0;
  unsigned char fill_ = 0;
  int first_device_ = 0;
  void* enqueued_ = nullptr;  // cudaEvent_t on stream_: what the other devices' flushes wait for
  std::vector<other_device> others_;
};

}  // namespace glabench
