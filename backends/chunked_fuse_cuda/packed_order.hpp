// Which stream runs which sequence of a packed batch (packed_streams.hpp): the longest
// first, each to the stream with the fewest tokens so far, so that the streams finish
// close together and each stream's first sequence is its longest (its workspace part is
// sized for that one). Plain C++: the CPU test tests/packed_order_test.cpp uses it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace glabench::chunked::packed {

// The sequences (indices into the N + 1 offsets `at`) of each of `streams` streams, in the
// order each stream runs them.
inline std::vector<std::vector<int64_t>> stream_order(const std::vector<int64_t>& at, int streams) {
  const int64_t n = int64_t(at.size()) - 1;
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return at[a + 1] - at[a] > at[b + 1] - at[b]; });
  std::vector<std::vector<int64_t>> of(streams);
  std::vector<int64_t> tokens(streams, 0);
  for (const int64_t i : order) {
    const int s = int(std::min_element(tokens.begin(), tokens.end()) - tokens.begin());
    of[s].push_back(i);
    tokens[s] += at[i + 1] - at[i];
  }
  return of;
}

}  // namespace glabench::chunked::packed
