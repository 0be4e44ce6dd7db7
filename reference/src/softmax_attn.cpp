// softmax attention, the baseline (docs/design.md §1): o = softmax(scale·q kᵀ + mask) v and
// lse = log Σ exp(scale·q kᵀ + mask), per (b, h), computed row by row with the row
// maximum subtracted first. Backward with D_t = do_t·o_t:
//   p = exp(s − lse);  ds = p (do_t·v_τ − D_t);  dq_t = scale Σ ds k_τ;
//   dk_τ += scale ds q_t;  dv_τ += p do_t.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "glabench/reference/ops.hpp"
#include "layout.hpp"
#include "parallel_for.hpp"

namespace glabench::reference {
namespace {

struct head_rows {
  const problem& p;
  const op_inputs& in;
  int64_t b, h;
  const double* q(int64_t t) const { return in.q.ptr() + token_offset(p, b, t, h, p.K); }
  const double* k(int64_t t) const { return in.k.ptr() + token_offset(p, b, t, h, p.K); }
  const double* v(int64_t t) const { return in.v.ptr() + token_offset(p, b, t, h, p.V); }
  int64_t keys(int64_t t) const { return p.causal ? t + 1 : p.T; }
  // Scaled scores of query t against its visible keys.
  std::vector<double> scores(int64_t t) const {
    std::vector<double> s(keys(t));
    for (int64_t tau = 0; tau < keys(t); ++tau) {
      double acc = 0;
      for (int64_t i = 0; i < p.K; ++i) acc += q(t)[i] * k(tau)[i];
      s[tau] = p.scale * acc;
    }
    return s;
  }
};

double log_sum_exp(const std::vector<double>& s) {
  const double m = *std::max_element(s.begin(), s.end());
  double sum = 0;
  for (double x : s) sum += std::exp(x - m);
  return m + std::log(sum);
}

}  // namespace

op_outputs softmax_attn_forward(const problem& p, const op_inputs& in) {
  op_outputs out = allocate_outputs(p);
  parallel_for(p.B * p.H, [&](int64_t bh) {
    const head_rows rows{p, in, bh / p.H, bh % p.H};
    for (int64_t t = 0; t < p.T; ++t) {
      const std::vector<double> s = rows.scores(t);
      const double lse = log_sum_exp(s);
      out.lse.ptr()[bh * p.T + t] = lse;
      double* o = out.o.ptr() + token_offset(p, rows.b, t, rows.h, p.V);
      std::fill_n(o, p.V, 0.0);
      for (int64_t tau = 0; tau < rows.keys(t); ++tau) {
        const double prob = std::exp(s[tau] - lse);
        for (int64_t j = 0; j < p.V; ++j) o[j] += prob * rows.v(tau)[j];
      }
    }
  });
  return out;
}

op_gradients softmax_attn_backward(const problem& p, const op_inputs& in) {
  const tensor& d_o = require_cotangent(in);
  const op_outputs fwd = softmax_attn_forward(p, in);
  op_gradients grad = allocate_gradients(p, false);
  parallel_for(p.B * p.H, [&](int64_t bh) {
    const head_rows rows{p, in, bh / p.H, bh % p.H};
    auto at_k = [&](tensor& x, int64_t t) {
      return x.ptr() + token_offset(p, rows.b, t, rows.h, p.K);
    };
    for (int64_t t = 0; t < p.T; ++t) {
      const int64_t tv = token_offset(p, rows.b, t, rows.h, p.V);
      const double* dout = d_o.ptr() + tv;
      const double* o = fwd.o.ptr() + tv;
      double D = 0;
      for (int64_t j = 0; j < p.V; ++j) D += dout[j] * o[j];
      const std::vector<double> s = rows.scores(t);
      const double lse = fwd.lse.ptr()[bh * p.T + t];
      for (int64_t tau = 0; tau < rows.keys(t); ++tau) {
        const double prob = std::exp(s[tau] - lse);
        double dp = 0;
        for (int64_t j = 0; j < p.V; ++j) dp += dout[j] * rows.v(tau)[j];
        const double ds = prob * (dp - D);
        for (int64_t i = 0; i < p.K; ++i) {
          at_k(grad.dq, t)[i] += p.scale * ds * rows.k(tau)[i];
          at_k(grad.dk, tau)[i] += p.scale * ds * rows.q(t)[i];
        }
        double* dv = grad.dv.ptr() + token_offset(p, rows.b, tau, rows.h, p.V);
        for (int64_t j = 0; j < p.V; ++j) dv[j] += prob * dout[j];
      }
    }
  });
  return grad;
}

}  // namespace glabench::reference
