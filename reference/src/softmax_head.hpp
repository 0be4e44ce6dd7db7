// One (b, h) of softmax attention, row by row: the math the whole-head reference
// (softmax_attn.cpp) and the sampled-row reference (softmax_attn_rows.cpp) share.
//   s_tτ = scale q_t·k_τ over the visible keys (τ ≤ t when causal);
//   lse_t = log Σ exp(s_t·), the row maximum subtracted first;  o_t = Σ p_tτ v_τ;
//   p_tτ = exp(s_tτ − lse_t);  ds_tτ = p_tτ (do_t·v_τ − D_t), D_t = do_t·o_t.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "glabench/reference/problem.hpp"
#include "layout.hpp"

namespace glabench::reference {

inline double dot_n(const double* a, const double* b, int64_t n) {
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

struct head_rows {
  const problem& p;
  const op_inputs& in;
  int64_t b, h;
  const double* q(int64_t t) const { return in.q.ptr() + token_offset(p, b, t, h, p.K); }
  const double* k(int64_t t) const { return in.k.ptr() + token_offset(p, b, t, h, p.K); }
  const double* v(int64_t t) const { return in.v.ptr() + token_offset(p, b, t, h, p.V); }
  const double* d_o(int64_t t) const { return in.d_o->ptr() + token_offset(p, b, t, h, p.V); }
  int64_t keys(int64_t t) const { return p.causal ? t + 1 : p.T; }
  // Scaled score of query t against key tau.
  double score(int64_t t, int64_t tau) const { return p.scale * dot_n(q(t), k(tau), p.K); }
  // Scaled scores of query t against its visible keys.
  std::vector<double> scores(int64_t t) const {
    std::vector<double> s(keys(t));
    for (int64_t tau = 0; tau < keys(t); ++tau) s[tau] = score(t, tau);
    return s;
  }
};

inline double log_sum_exp(const std::vector<double>& s) {
  const double m = *std::max_element(s.begin(), s.end());
  double sum = 0;
  for (double x : s) sum += std::exp(x - m);
  return m + std::log(sum);
}

// Query t's forward from its scores s: writes o_t (V values) to o, returns lse_t.
inline double forward_row(const head_rows& r, int64_t t, const std::vector<double>& s, double* o) {
  const double lse = log_sum_exp(s);
  std::fill_n(o, r.p.V, 0.0);
  for (int64_t tau = 0; tau < r.keys(t); ++tau) {
    const double prob = std::exp(s[tau] - lse);
    for (int64_t j = 0; j < r.p.V; ++j) o[j] += prob * r.v(tau)[j];
  }
  return lse;
}

// p_tτ and ds_tτ of query t (score s, lse_t, cotangent dout = do_t, D_t) against key tau.
struct pair_grad {
  double prob, ds;
};
inline pair_grad pair_gradient(const head_rows& r, int64_t tau, double s, double lse,
                               const double* dout, double D) {
  const double prob = std::exp(s - lse);
  return {prob, prob * (dot_n(dout, r.v(tau), r.p.V) - D)};
}

}  // namespace glabench::reference
