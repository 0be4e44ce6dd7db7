// The per-formulation entry points behind the dispatch in ops.cpp.
#pragma once

#include "glabench/reference/problem.hpp"

namespace glabench::reference {

op_outputs gla_forward_recurrent(const problem& p, const op_inputs& in);
op_gradients gla_backward_recurrent(const problem& p, const op_inputs& in);
op_outputs gla_forward_parallel(const problem& p, const op_inputs& in);
op_gradients gla_backward_parallel(const problem& p, const op_inputs& in);

op_outputs rwkv6_forward_recurrent(const problem& p, const op_inputs& in);
op_gradients rwkv6_backward_recurrent(const problem& p, const op_inputs& in);
op_outputs rwkv6_forward_parallel(const problem& p, const op_inputs& in);
op_gradients rwkv6_backward_parallel(const problem& p, const op_inputs& in);

}  // namespace glabench::reference
