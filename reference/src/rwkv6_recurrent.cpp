// rwkv6 by its recurrence (docs/design.md §1), r stored in q and w in g:
//   o_t = scale · r_t (S_{t-1} + diag(u) k_tᵀ v_t),   S_t = diag(exp(w_t)) S_{t-1} + k_tᵀ v_t.
// Backward, with G the adjoint of S_t (G_T = dht):
//   dk_t = G_t v_t + scale (r_t ⊙ u) (v_t·do_t);  dv_t = k_t G_t + scale (r_t·(u ⊙ k_t)) do_t;
//   dw_t = exp(w_t) ⊙ rowsum(G_t ⊙ S_{t-1});  dr_t = scale (S_{t-1} + diag(u) k_tᵀ v_t) do_t;
//   du += scale r_t ⊙ k_t (v_t·do_t);  G_{t-1} = diag(exp(w_t)) G_t + scale r_tᵀ do_t.
#include <algorithm>
#include <cmath>
#include <vector>

#include "glabench/reference/parallel_for.hpp"
#include "layout.hpp"
#include "ops_internal.hpp"

namespace glabench::reference {
namespace {

// Advances one (b, h)'s S ([K][V]) over tokens [t0, t1): writes o when `o` is given and the
// state after each token to states[(t − t0 + 1)·K·V] when `states` is.
void walk(const problem& p, const op_inputs& in, int64_t b, int64_t h, int64_t t0, int64_t t1,
          std::vector<double>& S, tensor* o, double* states) {
  const int64_t K = p.K, V = p.V;
  const double* u = in.u.ptr() + h * K;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t tk = token_offset(p, b, t, h, K), tv = token_offset(p, b, t, h, V);
    const double *r = in.q.ptr() + tk, *k = in.k.ptr() + tk, *w = in.g.ptr() + tk;
    const double* v = in.v.ptr() + tv;
    if (o) {
      double bonus = 0;  // r_t · (u ⊙ k_t)
      for (int64_t i = 0; i < K; ++i) bonus += r[i] * u[i] * k[i];
      for (int64_t j = 0; j < V; ++j) {
        double acc = bonus * v[j];
        for (int64_t i = 0; i < K; ++i) acc += r[i] * S[i * V + j];
        o->ptr()[tv + j] = p.scale * acc;
      }
    }
    for (int64_t i = 0; i < K; ++i) {
      const double decay = std::exp(w[i]);
      for (int64_t j = 0; j < V; ++j) S[i * V + j] = decay * S[i * V + j] + k[i] * v[j];
    }
    if (states) std::copy(S.begin(), S.end(), states + (t - t0 + 1) * K * V);
  }
}

std::vector<double> initial_state(const problem& p, const op_inputs& in, int64_t b, int64_t h) {
  std::vector<double> S(p.K * p.V, 0.0);
  if (in.h0) std::copy_n(in.h0->ptr() + state_offset(p, b, h), p.K * p.V, S.begin());
  return S;
}

}  // namespace

op_outputs rwkv6_forward_recurrent(const problem& p, const op_inputs& in) {
  op_outputs out = allocate_outputs(p);
  parallel_for(p.B * p.H, [&](int64_t bh) {
    const int64_t b = bh / p.H, h = bh % p.H;
    std::vector<double> S = initial_state(p, in, b, h);
    walk(p, in, b, h, 0, p.T, S, &out.o, nullptr);
    std::copy(S.begin(), S.end(), out.ht.ptr() + state_offset(p, b, h));
  });
  return out;
}

// The reverse pass needs every S_{t−1}: reverse_by_checkpoints recomputes them in O(√T)
// states' memory.
op_gradients rwkv6_backward_recurrent(const problem& p, const op_inputs& in) {
  const tensor& d_o = require_cotangent(in);
  op_gradients grad = allocate_gradients(p, in.h0.has_value());
  const int64_t K = p.K, V = p.V, kv = K * V;
  // du sums over batch: each (b, h) writes its own slot, reduced after the parallel loop.
  std::vector<double> du_per_bh(p.B * p.H * K, 0.0);
  parallel_for(p.B * p.H, [&](int64_t bh) {
    const int64_t b = bh / p.H, h = bh % p.H;
    const double* u = in.u.ptr() + h * K;
    double* du = du_per_bh.data() + bh * K;
    std::vector<double> G(kv, 0.0);
    if (in.dht) std::copy_n(in.dht->ptr() + state_offset(p, b, h), kv, G.begin());
    auto advance = [&](int64_t t0, int64_t t1, std::vector<double>& at, double* states) {
      walk(p, in, b, h, t0, t1, at, nullptr, states);
    };
    reverse_by_checkpoints(
        p.T, initial_state(p, in, b, h), advance,
        [&](int64_t t, const double* S_prev, const double*) {
          const int64_t tk = token_offset(p, b, t, h, K), tv = token_offset(p, b, t, h, V);
          const double *r = in.q.ptr() + tk, *k = in.k.ptr() + tk, *w = in.g.ptr() + tk;
          const double *v = in.v.ptr() + tv, *dout = d_o.ptr() + tv;
          double v_dot_do = 0, bonus = 0;
          for (int64_t j = 0; j < V; ++j) v_dot_do += v[j] * dout[j];
          for (int64_t i = 0; i < K; ++i) bonus += r[i] * u[i] * k[i];
          for (int64_t i = 0; i < K; ++i) {
            double Gv = 0, GS = 0, Sdo = 0;
            for (int64_t j = 0; j < V; ++j) {
              Gv += G[i * V + j] * v[j];
              GS += G[i * V + j] * S_prev[i * V + j];
              Sdo += S_prev[i * V + j] * dout[j];
            }
            grad.dk.ptr()[tk + i] = Gv + p.scale * r[i] * u[i] * v_dot_do;
            grad.dg.ptr()[tk + i] = std::exp(w[i]) * GS;
            grad.dq.ptr()[tk + i] = p.scale * (Sdo + u[i] * k[i] * v_dot_do);
            du[i] += p.scale * r[i] * k[i] * v_dot_do;
          }
          for (int64_t j = 0; j < V; ++j) {
            double kG = 0;
            for (int64_t i = 0; i < K; ++i) kG += k[i] * G[i * V + j];
            grad.dv.ptr()[tv + j] = kG + p.scale * bonus * dout[j];
          }
          for (int64_t i = 0; i < K; ++i) {
            const double decay = std::exp(w[i]);
            for (int64_t j = 0; j < V; ++j)
              G[i * V + j] = decay * G[i * V + j] + p.scale * r[i] * dout[j];
          }
        });
    if (in.h0) std::copy(G.begin(), G.end(), grad.dh0.ptr() + state_offset(p, b, h));
  });
  for (int64_t bh = 0; bh < p.B * p.H; ++bh)
    for (int64_t i = 0; i < K; ++i) grad.du.ptr()[(bh % p.H) * K + i] += du_per_bh[bh * K + i];
  return grad;
}

}  // namespace glabench::reference
