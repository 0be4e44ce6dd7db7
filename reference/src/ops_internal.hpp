// The per-formulation entry points behind the dispatch in ops.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "glabench/reference/problem.hpp"

namespace glabench::reference {

// The reverse pass of a recurrence over T tokens in O(√T) states' memory (gla's and
// rwkv6's backward). A forward keeps the state at the start of every segment of ⌈√T⌉
// tokens; then, last segment first, each segment's states are recomputed from its start
// by the same operations in the same order (so they are those of one forward pass), and
// `step(t, S_prev, S_now)` runs for its tokens in reverse, with the states before and after
// token t. `walk(t0, t1, S, states)` advances S over tokens [t0, t1), writing the state after
// token t to states[(t − t0 + 1)·S.size()] when `states` is not null.
template <class Walk, class Step>
void reverse_by_checkpoints(int64_t T, std::vector<double> S, Walk walk, Step step) {
  const int64_t n = static_cast<int64_t>(S.size());
  const int64_t span = std::max<int64_t>(1, std::llround(std::ceil(std::sqrt(double(T)))));
  const int64_t segments = (T + span - 1) / span;
  std::vector<double> starts(segments * n), states((span + 1) * n);
  for (int64_t s = 0; s < segments; ++s) {
    std::copy(S.begin(), S.end(), starts.begin() + s * n);
    if (s + 1 < segments) walk(s * span, (s + 1) * span, S, nullptr);
  }
  for (int64_t s = segments - 1; s >= 0; --s) {
    const int64_t t0 = s * span, t1 = std::min(T, t0 + span);
    std::copy_n(starts.begin() + s * n, n, S.begin());
    std::copy(S.begin(), S.end(), states.begin());
    walk(t0, t1, S, states.data());
    for (int64_t t = t1 - 1; t >= t0; --t)
      step(t, states.data() + (t - t0) * n, states.data() + (t - t0 + 1) * n);
  }
}

op_outputs gla_forward_recurrent(const problem& p, const op_inputs& in);
op_gradients gla_backward_recurrent(const problem& p, const op_inputs& in);
op_outputs gla_forward_parallel(const problem& p, const op_inputs& in);
op_gradients gla_backward_parallel(const problem& p, const op_inputs& in);

op_outputs rwkv6_forward_recurrent(const problem& p, const op_inputs& in);
op_gradients rwkv6_backward_recurrent(const problem& p, const op_inputs& in);
op_outputs rwkv6_forward_parallel(const problem& p, const op_inputs& in);
op_gradients rwkv6_backward_parallel(const problem& p, const op_inputs& in);

}  // namespace glabench::reference
