// Packed variable-length batches (docs/design.md §1, problem::cu_seqlens) in one place:
// the problem is split into one problem per sequence (B = 1, T = its length, no
// cu_seqlens), each run by an op of the ordinary kind, and the results put back: token
// tensors along T, states by sequence, lse along its T axis, and du summed over the
// sequences (it is summed over batch and time).
#pragma once

#include <functional>

#include "glabench/reference/problem.hpp"

namespace glabench::reference {

using forward_fn = std::function<op_outputs(const problem&, const op_inputs&)>;
using backward_fn = std::function<op_gradients(const problem&, const op_inputs&)>;

// For p.varlen(): checks p and in (states of p.state_shape()), then runs `op` on each
// sequence as a problem of its own.
op_outputs varlen_forward(const problem& p, const op_inputs& in, const forward_fn& op);
op_gradients varlen_backward(const problem& p, const op_inputs& in, const backward_fn& op);

}  // namespace glabench::reference
