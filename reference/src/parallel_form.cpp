// gla and rwkv6 in their parallel (quadratic) form, evaluated in log space.
//
// With the inclusive cumulative log gate b_t = Σ_{r≤t} g_r (b_{-1} = 0), the state a
// query reads is a decayed sum over earlier tokens:
//   gla   (reads S_t):     o_t = scale (Σ_{s≤t} A_ts v_s + q_t diag(e^{b_t}) h0)
//   rwkv6 (reads S_{t-1}): o_t = scale (Σ_{s<t} A_ts v_s + r_t diag(e^{b_{t-1}}) h0
//                                       + (r_t·(u ⊙ k_t)) v_t)
//   A_ts = Σ_i q_t[i] k_s[i] exp(c_t[i] − b_s[i]),  c_t = b_t (gla) or b_{t-1} (rwkv6)
//   ht   = diag(e^{b_{T-1}}) h0 + Σ_s diag(exp(b_{T-1} − b_s)) k_sᵀ v_s
// Every exponent is a sum of gates over a non-empty or empty run of tokens, so ≤ 0:
// the form stays finite for any gate, even g = −30 over thousands of tokens, where
// the naive exp(b_t)·exp(−b_s) would overflow.
//
// The backward differentiates each term directly. A term's decay exp(b_end − b_start)
// spans the gates g_t with start < t ≤ end, so ∂/∂g_t of the term is the term itself
// for exactly those t. dg_t is therefore the sum of every term whose span covers t,
// computed as a two-sided range sum (below). The shorter route — +P at the span's end,
// −P at its start, then a suffix sum — cancels catastrophically when dg is tiny
// (g = −30: dg ≈ 1e-13 next to O(1) terms), so it is not used. This shares no code
// or derivation with the recurrent backward.
#include <cmath>
#include <functional>
#include <vector>

#include "glabench/reference/parallel_for.hpp"
#include "layout.hpp"
#include "ops_internal.hpp"

namespace glabench::reference {
namespace {

struct head_form {
  const problem& p;
  const op_inputs& in;
  int64_t b, h;
  bool reads_state_before_token;  // rwkv6: true, gla: false
  // cumulative log gates, row r = b_{r-1} (row 0 = 0), (T+1) × K
  std::vector<double> log_cum;

  head_form(const problem& p_, const op_inputs& in_, int64_t b_, int64_t h_)
      : p(p_),
        in(in_),
        b(b_),
        h(h_),
        reads_state_before_token(p_.op == op_kind::rwkv6),
        log_cum((p_.T + 1) * p_.K, 0.0) {
    for (int64_t t = 0; t < p.T; ++t) {
      const double* g = in.g.ptr() + token_offset(p, b, t, h, p.K);
      for (int64_t i = 0; i < p.K; ++i) log_cum[(t + 1) * p.K + i] = log_cum[t * p.K + i] + g[i];
    }
  }
  // Row of log_cum that query t decays from: b_t (gla) or b_{t-1} (rwkv6).
  int64_t query_row(int64_t t) const { return reads_state_before_token ? t : t + 1; }
  int64_t last_key(int64_t t) const { return reads_state_before_token ? t - 1 : t; }
  double decay(int64_t from_row, int64_t to_row, int64_t i) const {
    return std::exp(log_cum[from_row * p.K + i] - log_cum[to_row * p.K + i]);
  }
  const double* q(int64_t t) const { return in.q.ptr() + token_offset(p, b, t, h, p.K); }
  const double* k(int64_t t) const { return in.k.ptr() + token_offset(p, b, t, h, p.K); }
  const double* v(int64_t t) const { return in.v.ptr() + token_offset(p, b, t, h, p.V); }
  const double* h0() const { return in.h0 ? in.h0->ptr() + state_offset(p, b, h) : nullptr; }
  const double* u() const { return p.has_bonus() ? in.u.ptr() + h * p.K : nullptr; }

  double pair_score(int64_t t, int64_t s) const {
    double a = 0;
    for (int64_t i = 0; i < p.K; ++i) a += q(t)[i] * k(s)[i] * decay(query_row(t), s + 1, i);
    return a;
  }
  double bonus(int64_t t) const {
    if (!u()) return 0;
    double acc = 0;
    for (int64_t i = 0; i < p.K; ++i) acc += q(t)[i] * u()[i] * k(t)[i];
    return acc;
  }
};

void forward_head(const head_form& f, op_outputs& out) {
  const problem& p = f.p;
  const int64_t K = p.K, V = p.V;
  for (int64_t t = 0; t < p.T; ++t) {
    double* o = out.o.ptr() + token_offset(p, f.b, t, f.h, V);
    std::vector<double> acc(V, 0.0);
    for (int64_t s = 0; s <= f.last_key(t); ++s) {
      const double a = f.pair_score(t, s);
      for (int64_t j = 0; j < V; ++j) acc[j] += a * f.v(s)[j];
    }
    const double bonus = f.bonus(t);
    for (int64_t j = 0; j < V; ++j) acc[j] += bonus * f.v(t)[j];
    if (const double* h0 = f.h0())
      for (int64_t i = 0; i < K; ++i) {
        const double qd = f.q(t)[i] * f.decay(f.query_row(t), 0, i);
        for (int64_t j = 0; j < V; ++j) acc[j] += qd * h0[i * V + j];
      }
    for (int64_t j = 0; j < V; ++j) o[j] = p.scale * acc[j];
  }
  double* ht = out.ht.ptr() + state_offset(p, f.b, f.h);
  const double* h0 = f.h0();
  for (int64_t i = 0; i < K; ++i)
    for (int64_t j = 0; j < V; ++j) {
      double acc = h0 ? f.decay(p.T, 0, i) * h0[i * V + j] : 0.0;
      for (int64_t s = 0; s < p.T; ++s) acc += f.decay(p.T, s + 1, i) * f.k(s)[i] * f.v(s)[j];
      ht[i * V + j] = acc;
    }
}

// dg for one (b, h). Every decayed term is filed in span_terms[i] at row = its span's
// end (the query's cumulative-gate row, or T for ht) and column = its span's start
// (the key's row, or 0 for h0). Term (end, start) covers g_t for start ≤ t < end in
// row units (row r holds b_{r-1}), so dg_t = Σ_{end > t} Σ_{start ≤ t} term.
class log_gate_gradient {
 public:
  explicit log_gate_gradient(int64_t T, int64_t K)
      : T_(T), terms_(K, std::vector<double>((T + 1) * (T + 1), 0.0)) {}
  void add(int64_t i, int64_t end_row, int64_t start_row, double term) {
    terms_[i][end_row * (T_ + 1) + start_row] += term;
  }
  // dg_t for t in [0, T): row-prefix over start ≤ t, then the sum over end > t.
  void write(int64_t i, const std::function<double&(int64_t t)>& dg) const {
    const std::vector<double>& m = terms_[i];
    std::vector<double> covered(T_, 0.0);
    for (int64_t end = 1; end <= T_; ++end) {
      double prefix = 0;
      for (int64_t t = 0; t < end; ++t) {
        prefix += m[end * (T_ + 1) + t];
        covered[t] += prefix;
      }
    }
    for (int64_t t = 0; t < T_; ++t) dg(t) = covered[t];
  }

 private:
  int64_t T_;
  std::vector<std::vector<double>> terms_;
};

void backward_head(const head_form& f, const tensor& d_o, const tensor* dht, op_gradients& grad,
                   double* du) {
  const problem& p = f.p;
  const int64_t K = p.K, V = p.V, T = p.T;
  auto dout = [&](int64_t t) { return d_o.ptr() + token_offset(p, f.b, t, f.h, V); };
  auto at_k = [&](tensor& x, int64_t t) { return x.ptr() + token_offset(p, f.b, t, f.h, K); };
  auto at_v = [&](tensor& x, int64_t t) { return x.ptr() + token_offset(p, f.b, t, f.h, V); };
  log_gate_gradient dlog(T, K);
  const double* h0 = f.h0();
  const double* dh = dht ? dht->ptr() + state_offset(p, f.b, f.h) : nullptr;

  // Token pairs.
  for (int64_t t = 0; t < T; ++t) {
    const int64_t qr = f.query_row(t);
    for (int64_t s = 0; s <= f.last_key(t); ++s) {
      double dA = 0;
      for (int64_t j = 0; j < V; ++j) dA += dout(t)[j] * f.v(s)[j];
      dA *= p.scale;
      const double a = f.pair_score(t, s);
      for (int64_t j = 0; j < V; ++j) at_v(grad.dv, s)[j] += p.scale * a * dout(t)[j];
      for (int64_t i = 0; i < K; ++i) {
        const double e = f.decay(qr, s + 1, i);
        at_k(grad.dq, t)[i] += dA * f.k(s)[i] * e;
        at_k(grad.dk, s)[i] += dA * f.q(t)[i] * e;
        dlog.add(i, qr, s + 1, dA * f.q(t)[i] * f.k(s)[i] * e);
      }
    }
  }
  // rwkv6's bonus on the diagonal.
  if (const double* u = f.u())
    for (int64_t t = 0; t < T; ++t) {
      double v_dot_do = 0;
      for (int64_t j = 0; j < V; ++j) v_dot_do += f.v(t)[j] * dout(t)[j];
      const double bonus = f.bonus(t);
      for (int64_t i = 0; i < K; ++i) {
        at_k(grad.dq, t)[i] += p.scale * u[i] * f.k(t)[i] * v_dot_do;
        at_k(grad.dk, t)[i] += p.scale * f.q(t)[i] * u[i] * v_dot_do;
        du[i] += p.scale * f.q(t)[i] * f.k(t)[i] * v_dot_do;
      }
      for (int64_t j = 0; j < V; ++j) at_v(grad.dv, t)[j] += p.scale * bonus * dout(t)[j];
    }
  // The initial state, read by every query.
  if (h0) {
    double* dh0 = grad.dh0.ptr() + state_offset(p, f.b, f.h);
    for (int64_t t = 0; t < T; ++t) {
      const int64_t qr = f.query_row(t);
      for (int64_t i = 0; i < K; ++i) {
        const double e = f.decay(qr, 0, i);
        double h0_do = 0;
        for (int64_t j = 0; j < V; ++j) {
          h0_do += h0[i * V + j] * dout(t)[j];
          dh0[i * V + j] += p.scale * e * f.q(t)[i] * dout(t)[j];
        }
        at_k(grad.dq, t)[i] += p.scale * e * h0_do;
        dlog.add(i, qr, 0, p.scale * f.q(t)[i] * e * h0_do);
      }
    }
  }
  // The final state ht.
  if (dh) {
    for (int64_t i = 0; i < K; ++i) {
      if (h0) {
        const double e = f.decay(T, 0, i);
        double dh_h0 = 0;
        for (int64_t j = 0; j < V; ++j) {
          grad.dh0.ptr()[state_offset(p, f.b, f.h) + i * V + j] += e * dh[i * V + j];
          dh_h0 += dh[i * V + j] * h0[i * V + j];
        }
        dlog.add(i, T, 0, e * dh_h0);
      }
      for (int64_t s = 0; s < T; ++s) {
        const double e = f.decay(T, s + 1, i);
        double dh_v = 0;
        for (int64_t j = 0; j < V; ++j) {
          dh_v += dh[i * V + j] * f.v(s)[j];
          at_v(grad.dv, s)[j] += e * f.k(s)[i] * dh[i * V + j];
        }
        at_k(grad.dk, s)[i] += e * dh_v;
        dlog.add(i, T, s + 1, e * f.k(s)[i] * dh_v);
      }
    }
  }
  for (int64_t i = 0; i < K; ++i)
    dlog.write(i, [&](int64_t t) -> double& { return at_k(grad.dg, t)[i]; });
}

op_outputs forward_parallel(const problem& p, const op_inputs& in) {
  op_outputs out = allocate_outputs(p);
  parallel_for(p.B * p.H,
               [&](int64_t bh) { forward_head(head_form(p, in, bh / p.H, bh % p.H), out); });
  return out;
}

op_gradients backward_parallel(const problem& p, const op_inputs& in) {
  const tensor& d_o = require_cotangent(in);
  op_gradients grad = allocate_gradients(p, in.h0.has_value());
  std::vector<double> du_per_bh(p.B * p.H * p.K, 0.0);
  parallel_for(p.B * p.H, [&](int64_t bh) {
    backward_head(head_form(p, in, bh / p.H, bh % p.H), d_o, in.dht ? &*in.dht : nullptr, grad,
                  du_per_bh.data() + bh * p.K);
  });
  if (p.has_bonus())
    for (int64_t bh = 0; bh < p.B * p.H; ++bh)
      for (int64_t i = 0; i < p.K; ++i)
        grad.du.ptr()[(bh % p.H) * p.K + i] += du_per_bh[bh * p.K + i];
  return grad;
}

}  // namespace

op_outputs gla_forward_parallel(const problem& p, const op_inputs& in) {
  return forward_parallel(p, in);
}
op_gradients gla_backward_parallel(const problem& p, const op_inputs& in) {
  return backward_parallel(p, in);
}
op_outputs rwkv6_forward_parallel(const problem& p, const op_inputs& in) {
  return forward_parallel(p, in);
}
op_gradients rwkv6_backward_parallel(const problem& p, const op_inputs& in) {
  return backward_parallel(p, in);
}

}  // namespace glabench::reference
