// softmax attention, the baseline (docs/design.md §1): o = softmax(scale·q kᵀ + mask) v and
// lse = log Σ exp(scale·q kᵀ + mask), per (b, h), computed row by row with the row
// maximum subtracted first (the row math in softmax_head.hpp). Backward with D_t = do_t·o_t:
//   p = exp(s − lse);  ds = p (do_t·v_τ − D_t);  dq_t = scale Σ ds k_τ;
//   dk_τ += scale ds q_t;  dv_τ += p do_t.
#include <vector>

#include "glabench/reference/ops.hpp"
#include "glabench/reference/parallel_for.hpp"
#include "softmax_head.hpp"
#include "varlen.hpp"

namespace glabench::reference {

op_outputs softmax_attn_forward(const problem& p, const op_inputs& in) {
  if (p.varlen()) return varlen_forward(p, in, softmax_attn_forward);  // attends within each
  op_outputs out = allocate_outputs(p);
  parallel_for(p.B * p.H, [&](int64_t bh) {
    const head_rows rows{p, in, bh / p.H, bh % p.H};
    for (int64_t t = 0; t < p.T; ++t)
      out.lse.ptr()[bh * p.T + t] = forward_row(
          rows, t, rows.scores(t), out.o.ptr() + token_offset(p, rows.b, t, rows.h, p.V));
  });
  return out;
}

op_gradients softmax_attn_backward(const problem& p, const op_inputs& in) {
  if (p.varlen()) return varlen_backward(p, in, softmax_attn_backward);
  require_cotangent(in);
  const op_outputs fwd = softmax_attn_forward(p, in);
  op_gradients grad = allocate_gradients(p, false);
  parallel_for(p.B * p.H, [&](int64_t bh) {
    const head_rows rows{p, in, bh / p.H, bh % p.H};
    auto at_k = [&](tensor& x, int64_t t) {
      return x.ptr() + token_offset(p, rows.b, t, rows.h, p.K);
    };
    for (int64_t t = 0; t < p.T; ++t) {
      const double* dout = rows.d_o(t);
      const double D = dot_n(dout, fwd.o.ptr() + token_offset(p, rows.b, t, rows.h, p.V), p.V);
      const std::vector<double> s = rows.scores(t);
      const double lse = fwd.lse.ptr()[bh * p.T + t];
      for (int64_t tau = 0; tau < rows.keys(t); ++tau) {
        const pair_grad g = pair_gradient(rows, tau, s[tau], lse, dout, D);
        for (int64_t i = 0; i < p.K; ++i) {
          at_k(grad.dq, t)[i] += p.scale * g.ds * rows.k(tau)[i];
          at_k(grad.dk, tau)[i] += p.scale * g.ds * rows.q(t)[i];
        }
        double* dv = grad.dv.ptr() + token_offset(p, rows.b, tau, rows.h, p.V);
        for (int64_t j = 0; j < p.V; ++j) dv[j] += g.prob * dout[j];
      }
    }
  });
  return grad;
}

}  // namespace glabench::reference
