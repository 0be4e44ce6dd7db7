// The host's counterpart of l2_flush, for backends that run on the CPU: writes a
// buffer twice the last-level cache (at most 128 MiB, because virtual machines report
// the whole host socket's cache) with a new byte value each time, and reads one byte
// back so that the writes are observed.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace glabench {

class llc_flush {
 public:
  llc_flush() {
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = 32L << 20;
    buffer_.resize(std::min(2 * size_t(llc), size_t(128) << 20));
  }
  void flush() {
    std::memset(buffer_.data(), ++fill_, buffer_.size());
    sink_ = sink_ + buffer_[fill_ % buffer_.size()];
  }

 private:
  std::vector<unsigned char> buffer_;
  unsigned char fill_ = 0;
  volatile unsigned sink_ = 0;
};

}  // namespace glabench
