// The per-formulation entry points behind the dispatch in ops.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "glabench/reference/problem.hpp"

namespace glabench::reference {

// The recurrent backwards' segment: they keep the state at the start of every segment of
// this many tokens (⌈√T⌉) and recompute a segment's states from it in reverse order.
inline int64_t checkpoint_span(int64_t T) {
  return std::max<int64_t>(1, std::llround(std::ceil(std::sqrt(double(T)))));
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
