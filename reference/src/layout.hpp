// Offsets into the row-major tensors of docs/design.md §1, and output allocation shared by the
// reference's formulations.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "glabench/reference/problem.hpp"

namespace glabench::reference {

// Element (b, t, h, 0) of a [B, T, H, D] token tensor.
inline int64_t token_offset(const problem& p, int64_t b, int64_t t, int64_t h, int64_t D) {
  return ((b * p.T + t) * p.H + h) * D;
}
// Element (b, h, 0, 0) of a [B, H, K, V] state tensor.
inline int64_t state_offset(const problem& p, int64_t b, int64_t h) {
  return (b * p.H + h) * p.K * p.V;
}

inline op_outputs allocate_outputs(const problem& p) {
  op_outputs out;
  out.o = tensor(p.v_shape());
  if (p.has_state()) out.ht = tensor(p.state_shape());
  if (p.op == op_kind::softmax_attn) out.lse = tensor(p.lse_shape());
  return out;
}

inline op_gradients allocate_gradients(const problem& p, bool has_h0) {
  op_gradients g;
  g.dq = tensor(p.qk_shape());
  g.dk = tensor(p.qk_shape());
  g.dv = tensor(p.v_shape());
  if (p.has_gate()) g.dg = tensor(p.qk_shape());
  if (p.has_bonus()) g.du = tensor(p.u_shape());
  if (p.has_state() && has_h0) g.dh0 = tensor(p.state_shape());
  return g;
}

inline const tensor& require_cotangent(const op_inputs& in) {
  if (!in.d_o) throw std::invalid_argument("backward needs the cotangent d_o");
  return *in.d_o;
}

}  // namespace glabench::reference
