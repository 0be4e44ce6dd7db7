// Runs fn(i) for i in [0, n) on all hardware threads. The reference parallelises over
// the B×H independent (batch, head) problems with it; the harness, long tensors' element
// loops (for_blocks).
#pragma once

#include <cstdint>
#include <functional>

namespace glabench::reference {

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

// fn(i) for i in [0, count), in blocks of 2^16 on all hardware threads.
template <class Fn>
void for_blocks(size_t count, Fn&& fn) {
  constexpr size_t kBlock = size_t{1} << 16;
  parallel_for(static_cast<int64_t>((count + kBlock - 1) / kBlock), [&](int64_t b) {
    const size_t first = static_cast<size_t>(b) * kBlock;
    const size_t last = first + kBlock < count ? first + kBlock : count;
    for (size_t i = first; i < last; ++i) fn(i);
  });
}

}  // namespace glabench::reference
