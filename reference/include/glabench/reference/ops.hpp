// The fp64 oracle (docs/design.md §2): forward and analytic backward of gla, rwkv6 and
// softmax_attn. gla and rwkv6 each come in two independent formulations:
//  - recurrent: the per-token state recurrence of docs/design.md §1, states kept for backward;
//  - parallel:  the quadratic form over token pairs, with decays taken as
//               exp(difference of cumulative log gates), which is ≤ 1 and so stays
//               finite however negative the gates are. O(T²) time and O(K·T²)
//               memory per (b, h): a cross-check for test-sized problems.
// All work is parallel over B×H. A packed variable-length batch (p.cu_seqlens) runs as
// one problem per sequence, each from its own h0[n] into its own ht[n]; softmax_attn
// attends within each sequence, and du sums over all of them. A malformed cu_seqlens
// (problem.hpp) or a state not of p.state_shape() throws std::invalid_argument.
#pragma once

#include "glabench/reference/problem.hpp"

namespace glabench::reference {

enum class formulation { recurrent, parallel };

op_outputs gla_forward(const problem& p, const op_inputs& in, formulation f);
op_gradients gla_backward(const problem& p, const op_inputs& in, formulation f);

op_outputs rwkv6_forward(const problem& p, const op_inputs& in, formulation f);
op_gradients rwkv6_backward(const problem& p, const op_inputs& in, formulation f);

op_outputs softmax_attn_forward(const problem& p, const op_inputs& in);
op_gradients softmax_attn_backward(const problem& p, const op_inputs& in);

// Dispatch on p.op. The backward reads in.d_o (required) and in.dht (optional; zero
// when absent). softmax_attn ignores the formulation.
op_outputs forward(const problem& p, const op_inputs& in, formulation f = formulation::recurrent);
op_gradients backward(const problem& p, const op_inputs& in,
                      formulation f = formulation::recurrent);

}  // namespace glabench::reference
