// gla by its recurrence (docs/design.md §1):
//   S_t = diag(exp(g_t)) S_{t-1} + k_tᵀ v_t,   o_t = scale · q_t S_t.
// Backward walks the tokens in reverse with G, the adjoint of S_t:
//   G_T = dht;  G_t += scale q_tᵀ do_t;  dq_t = scale S_t do_t;  dk_t = G_t v_t;
//   dv_t = k_t G_t;  dg_t = exp(g_t) ⊙ rowsum(G_t ⊙ S_{t-1});  G_{t-1} = diag(exp(g_t)) G_t.
// The states S_0..S_T of one (b, h) are kept for the reverse pass.
#include <cmath>
#include <vector>

#include "layout.hpp"
#include "ops_internal.hpp"
#include "parallel_for.hpp"

namespace glabench::reference {
namespace {

// Runs the recurrence for one (b, h); writes o and ht, and all states when asked.
void gla_head_forward(const problem& p, const op_inputs& in, int64_t b, int64_t h, op_outputs& out,
                      std::vector<double>* states) {
  const int64_t K = p.K, V = p.V;
  std::vector<double> S(K * V, 0.0);
  if (in.h0) std::copy_n(in.h0->ptr() + state_offset(p, b, h), K * V, S.begin());
  if (states) std::copy(S.begin(), S.end(), states->begin());
  for (int64_t t = 0; t < p.T; ++t) {
    const double* q = in.q.ptr() + token_offset(p, b, t, h, K);
    const double* k = in.k.ptr() + token_offset(p, b, t, h, K);
    const double* g = in.g.ptr() + token_offset(p, b, t, h, K);
    const double* v = in.v.ptr() + token_offset(p, b, t, h, V);
    double* o = out.o.ptr() + token_offset(p, b, t, h, V);
    for (int64_t i = 0; i < K; ++i) {
      const double decay = std::exp(g[i]);
      for (int64_t j = 0; j < V; ++j) S[i * V + j] = decay * S[i * V + j] + k[i] * v[j];
    }
    for (int64_t j = 0; j < V; ++j) {
      double acc = 0;
      for (int64_t i = 0; i < K; ++i) acc += q[i] * S[i * V + j];
      o[j] = p.scale * acc;
    }
    if (states) std::copy(S.begin(), S.end(), states->begin() + (t + 1) * K * V);
  }
  std::copy(S.begin(), S.end(), out.ht.ptr() + state_offset(p, b, h));
}

}  // namespace

op_outputs gla_forward_recurrent(const problem& p, const op_inputs& in) {
  op_outputs out = allocate_outputs(p);
  parallel_for(p.B * p.H,
               [&](int64_t bh) { gla_head_forward(p, in, bh / p.H, bh % p.H, out, nullptr); });
  return out;
}

op_gradients gla_backward_recurrent(const problem& p, const op_inputs& in) {
  const tensor& d_o = require_cotangent(in);
  op_gradients grad = allocate_gradients(p, in.h0.has_value());
  op_outputs scratch = allocate_outputs(p);
  const int64_t K = p.K, V = p.V;
  parallel_for(p.B * p.H, [&](int64_t bh) {
    const int64_t b = bh / p.H, h = bh % p.H;
    std::vector<double> states((p.T + 1) * K * V);
    gla_head_forward(p, in, b, h, scratch, &states);
    std::vector<double> G(K * V, 0.0);
    if (in.dht) std::copy_n(in.dht->ptr() + state_offset(p, b, h), K * V, G.begin());
    for (int64_t t = p.T - 1; t >= 0; --t) {
      const int64_t tk = token_offset(p, b, t, h, K), tv = token_offset(p, b, t, h, V);
      const double *q = in.q.ptr() + tk, *k = in.k.ptr() + tk, *g = in.g.ptr() + tk;
      const double *v = in.v.ptr() + tv, *dout = d_o.ptr() + tv;
      const double* S_now = states.data() + (t + 1) * K * V;
      const double* S_prev = states.data() + t * K * V;
      for (int64_t i = 0; i < K; ++i) {
        double dq = 0, dk = 0, dg = 0;
        for (int64_t j = 0; j < V; ++j) {
          double& Gij = G[i * V + j];
          Gij += p.scale * q[i] * dout[j];
          dq += dout[j] * S_now[i * V + j];
          dk += Gij * v[j];
          dg += Gij * S_prev[i * V + j];
        }
        const double decay = std::exp(g[i]);
        grad.dq.ptr()[tk + i] = p.scale * dq;
        grad.dk.ptr()[tk + i] = dk;
        grad.dg.ptr()[tk + i] = decay * dg;
      }
      for (int64_t j = 0; j < V; ++j) {
        double dv = 0;
        for (int64_t i = 0; i < K; ++i) dv += k[i] * G[i * V + j];
        grad.dv.ptr()[tv + j] = dv;
      }
      for (int64_t i = 0; i < K; ++i) {
        const double decay = std::exp(g[i]);
        for (int64_t j = 0; j < V; ++j) G[i * V + j] *= decay;
      }
    }
    if (in.h0) std::copy(G.begin(), G.end(), grad.dh0.ptr() + state_offset(p, b, h));
  });
  return grad;
}

}  // namespace glabench::reference
