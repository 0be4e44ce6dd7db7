// Carving one allocation into aligned pieces, in order: the sizes function walks the same
// carving with a null base to count the bytes, the run with the real base.
#pragma once

#include <cstddef>

namespace glabench::ring {

struct carver {
  static constexpr size_t kAlign = 256;
  char* base;
  size_t used = 0;
  template <typename X>
  X* take(size_t count) {
    X* p = reinterpret_cast<X*>(base ? base + used : nullptr);
    used += (count * sizeof(X) + kAlign - 1) / kAlign * kAlign;
    return p;
  }
};

}  // namespace glabench::ring
