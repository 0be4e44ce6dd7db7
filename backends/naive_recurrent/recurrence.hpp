// The textbook per-token recurrence of gla and rwkv6, one (batch, head) at a time, in
// the run's dtype (`real` is float or double: state and arithmetic alike).
//
// Forward keeps only S (K×V). Backward needs S_{t-1} at every step in reverse; rather
// than store all T states it stores one checkpoint every kChunk tokens on the way
// forward and recomputes each chunk's states from its checkpoint on the way back, so
// the workspace is (⌈T/kChunk⌉ + kChunk + 2)·K·V values.
//
// Written independently of reference/: agreeing with it means something.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace glabench::naive {

inline constexpr int64_t kChunk = 64;

struct sizes {
  int64_t B, T, H, K, V;
  bool rwkv6;  // o reads S_{t-1} plus the bonus, instead of S_t
};

inline int64_t workspace_values(const sizes& n, bool backward) {
  if (!backward) return n.K * n.V;
  const int64_t chunks = (n.T + kChunk - 1) / kChunk;
  return (chunks + kChunk + 2) * n.K * n.V;
}

// Pointers to one (b, h) of every tensor; token tensors advance by a stride of H·D.
template <typename real>
struct head {
  const real *q, *k, *v, *g, *u, *h0;
  real *o, *ht;
  int64_t stride_k, stride_v;  // elements between consecutive tokens
};

template <typename real>
void advance_state(const sizes& n, const head<real>& x, int64_t t, real* S) {
  const real* k = x.k + t * x.stride_k;
  const real* g = x.g + t * x.stride_k;
  const real* v = x.v + t * x.stride_v;
  for (int64_t i = 0; i < n.K; ++i) {
    const real a = std::exp(g[i]);
    for (int64_t j = 0; j < n.V; ++j) S[i * n.V + j] = a * S[i * n.V + j] + k[i] * v[j];
  }
}

// o_t from the state it reads: S_t for gla (already advanced), S_{t-1} for rwkv6.
template <typename real>
void emit_output(const sizes& n, const head<real>& x, int64_t t, real scale, const real* S) {
  const real* q = x.q + t * x.stride_k;
  const real* k = x.k + t * x.stride_k;
  const real* v = x.v + t * x.stride_v;
  real bonus = 0;
  if (n.rwkv6)
    for (int64_t i = 0; i < n.K; ++i) bonus += q[i] * x.u[i] * k[i];
  for (int64_t j = 0; j < n.V; ++j) {
    real acc = bonus * v[j];
    for (int64_t i = 0; i < n.K; ++i) acc += q[i] * S[i * n.V + j];
    x.o[t * x.stride_v + j] = scale * acc;
  }
}

template <typename real>
void load_initial_state(const sizes& n, const head<real>& x, real* S) {
  if (x.h0)
    std::copy_n(x.h0, n.K * n.V, S);
  else
    std::fill_n(S, n.K * n.V, real(0));
}

template <typename real>
void forward_head(const sizes& n, const head<real>& x, real scale, real* S) {
  load_initial_state(n, x, S);
  for (int64_t t = 0; t < n.T; ++t) {
    if (n.rwkv6) emit_output(n, x, t, scale, S);
    advance_state(n, x, t, S);
    if (!n.rwkv6) emit_output(n, x, t, scale, S);
  }
  std::copy_n(S, n.K * n.V, x.ht);
}

template <typename real>
struct head_grads {
  const real *d_o, *dht;
  real *dq, *dk, *dv, *dg, *du, *dh0;
};

// Reverse pass for one (b, h). G is the adjoint of S_t; du accumulates over batch.
template <typename real>
void backward_head(const sizes& n, const head<real>& x, const head_grads<real>& d, real scale,
                   real* workspace) {
  const int64_t KV = n.K * n.V;
  const int64_t chunks = (n.T + kChunk - 1) / kChunk;
  real* checkpoints = workspace;                   // chunks × KV: S at each chunk start
  real* chunk_states = checkpoints + chunks * KV;  // (kChunk + 1) × KV
  real* G = chunk_states + (kChunk + 1) * KV;      // KV

  real* S = chunk_states;
  load_initial_state(n, x, S);
  for (int64_t t = 0; t < n.T; ++t) {
    if (t % kChunk == 0) std::copy_n(S, KV, checkpoints + (t / kChunk) * KV);
    advance_state(n, x, t, S);
  }

  if (d.dht)
    std::copy_n(d.dht, KV, G);
  else
    std::fill_n(G, KV, real(0));

  for (int64_t c = chunks - 1; c >= 0; --c) {
    const int64_t t0 = c * kChunk, t1 = std::min(n.T, t0 + kChunk);
    // chunk_states[s] = S_{t0+s} (the state after t0+s tokens)
    std::copy_n(checkpoints + c * KV, KV, chunk_states);
    for (int64_t t = t0; t < t1; ++t) {
      std::copy_n(chunk_states + (t - t0) * KV, KV, chunk_states + (t - t0 + 1) * KV);
      advance_state(n, x, t, chunk_states + (t - t0 + 1) * KV);
    }
    for (int64_t t = t1 - 1; t >= t0; --t) {
      const real* before = chunk_states + (t - t0) * KV;     // S_{t-1}
      const real* after = chunk_states + (t - t0 + 1) * KV;  // S_t
      const real* q = x.q + t * x.stride_k;
      const real* k = x.k + t * x.stride_k;
      const real* g = x.g + t * x.stride_k;
      const real* v = x.v + t * x.stride_v;
      const real* dout = d.d_o + t * x.stride_v;
      real* dq = d.dq + t * x.stride_k;
      real* dk = d.dk + t * x.stride_k;
      real* dg = d.dg + t * x.stride_k;
      real* dv = d.dv + t * x.stride_v;

      real v_do = 0, bonus = 0;
      if (n.rwkv6) {
        for (int64_t j = 0; j < n.V; ++j) v_do += v[j] * dout[j];
        for (int64_t i = 0; i < n.K; ++i) bonus += q[i] * x.u[i] * k[i];
      } else {
        // gla's o_t reads S_t: its cotangent joins G before G is used for this token.
        for (int64_t i = 0; i < n.K; ++i)
          for (int64_t j = 0; j < n.V; ++j) G[i * n.V + j] += scale * q[i] * dout[j];
      }
      const real* read = n.rwkv6 ? before : after;  // the state o_t reads
      for (int64_t i = 0; i < n.K; ++i) {
        real read_do = 0, G_v = 0, G_before = 0;
        for (int64_t j = 0; j < n.V; ++j) {
          read_do += read[i * n.V + j] * dout[j];
          G_v += G[i * n.V + j] * v[j];
          G_before += G[i * n.V + j] * before[i * n.V + j];
        }
        dq[i] = scale * read_do;
        dk[i] = G_v;
        dg[i] = std::exp(g[i]) * G_before;
        if (n.rwkv6) {
          dq[i] += scale * x.u[i] * k[i] * v_do;
          dk[i] += scale * q[i] * x.u[i] * v_do;
          d.du[i] += scale * q[i] * k[i] * v_do;
        }
      }
      for (int64_t j = 0; j < n.V; ++j) {
        real k_G = 0;
        for (int64_t i = 0; i < n.K; ++i) k_G += k[i] * G[i * n.V + j];
        dv[j] = k_G + (n.rwkv6 ? scale * bonus * dout[j] : real(0));
      }
      // G becomes the adjoint of S_{t-1}.
      for (int64_t i = 0; i < n.K; ++i) {
        const real a = std::exp(g[i]);
        for (int64_t j = 0; j < n.V; ++j) {
          G[i * n.V + j] *= a;
          if (n.rwkv6) G[i * n.V + j] += scale * q[i] * dout[j];
        }
      }
    }
  }
  if (d.dh0) std::copy_n(G, KV, d.dh0);
}

}  // namespace glabench::naive
