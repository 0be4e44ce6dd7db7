// One allocation (the workspace the harness passes, a rank's buffers) carved into
// 256-byte-aligned pieces, in order. The function that says how many bytes are needed
// walks the same carving with a null base and reads `used`; the call walks it with the
// real base, so the two never disagree. Plain C++.
#pragma once

#include <cstddef>

namespace glabench::cuda_plugin {

struct carver {
  static constexpr size_t kAlign = 256;
  char* base;  // null: only count
  size_t used = 0;
  template <typename X>
  X* take(size_t count) {
    X* p = reinterpret_cast<X*>(base ? base + used : nullptr);
    used += (count * sizeof(X) + kAlign - 1) / kAlign * kAlign;
    return p;
  }
};

}  // namespace glabench::cuda_plugin
