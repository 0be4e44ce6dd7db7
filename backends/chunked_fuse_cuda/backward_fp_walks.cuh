// The fp32 and fp64 backward's state passes on the forward walks (forward_fp32_3xtf32.cuh,
// forward_fp64_dmma.cuh), ahead of chunk_fp_grads_kernel (backward_fp_mma_grads.cuh):
//
//   1. the walk, outputs off, leaves the state S_n before every 64-token chunk n;
//   2. reverse_tokens_kernel lays the sequence out backwards, padded at its front to whole
//      chunks (Tp = NT·64 tokens; reversed token τ is token s = Tp − 1 − τ, none where
//      s ≥ T), with q′ = k_s, k′ = q_s, v′ = scale·do_s and the gates one token on,
//      g′ = g_{s+1} (0 at s = T − 1 and in the padding);
//   3. the walk on it, from h0′ = dht, scale 1, is the backward's dS walk. Its state after
//      reversed token τ is Σ_{s′ ≥ s} e^{G_{s′} − G_s} q_{s′} ⊗ scale·do_{s′} +
//      e^{G_{T−1} − G_s} dht, so its output o′_τ is dv_s, its final state e^{−g_0} ⊙ dh0,
//      and the state R_n it leaves before the reversed chunk that holds chunk n is
//      e^{−g[64(n+1)]} ⊙ dS_n (dS_{NT−1} = R_{NT−1} = dht);
//   4. dv_from_reversed_kernel takes dv out of o′ and scales dh0 by e^{g_0}; the gradient
//      kernel takes R_n's row factors after its sums.
//
// Every exponent of the walks stays a difference of gates ≤ 0, as in the forward; the
// WMMA kernels' state, dS and dv passes are not needed. A sequence-parallel rank's fp32
// or fp64 call runs here whole, its carried states as h0 and dht (launch.cu, whole_call).
#pragma once

#include <cstdint>

#include "reversed_tokens.hpp"

namespace glabench::chunked::fp_backward {

template <class S>
struct reversal {
  const S *q, *k, *g, *d_o;
  S *rq, *rk, *rg, *rv;  // [B][Tp][H][K or V]
  int B, H, K, V;
  int64_t T, Tp;
  S scale;
};

// A block a reversed token row (b, τ), a thread a 16-byte vector: every head's K vectors
// of q′, k′ and g′, then its V vectors of v′. The row's source and gate tokens are found
// once a block; within the row, vectors are contiguous in both layouts.
template <class S>
__global__ void reverse_tokens_kernel(reversal<S> r) {
  constexpr int vec = 16 / sizeof(S);
  const int kv = r.K / vec, vv = r.V / vec;
  for (int64_t row = blockIdx.x; row < r.B * r.Tp; row += gridDim.x) {
    const int64_t b = row / r.Tp, tau = row % r.Tp;
    const int64_t s = reversed::source_token(tau, r.Tp, r.T),
                  gs = reversed::gate_token(tau, r.Tp, r.T);
    const int64_t kd = row * r.H * r.K, vd = row * r.H * r.V;  // this row's first element
    const int64_t ks = (b * r.T + s) * r.H * r.K, kg = (b * r.T + gs) * r.H * r.K;
    for (int j = threadIdx.x; j < r.H * kv; j += blockDim.x) {
      uint4 q{}, k{}, g{};
      if (s >= 0) {
        q = reinterpret_cast<const uint4*>(r.q + ks)[j];
        k = reinterpret_cast<const uint4*>(r.k + ks)[j];
      }
      if (gs >= 0) g = reinterpret_cast<const uint4*>(r.g + kg)[j];
      reinterpret_cast<uint4*>(r.rq + kd)[j] = k;
      reinterpret_cast<uint4*>(r.rk + kd)[j] = q;
      reinterpret_cast<uint4*>(r.rg + kd)[j] = g;
    }
    const int64_t vs = (b * r.T + s) * r.H * r.V;
    for (int j = threadIdx.x; j < r.H * vv; j += blockDim.x) {
      uint4 x{};
      if (s >= 0) x = reinterpret_cast<const uint4*>(r.d_o + vs)[j];
      S* e = reinterpret_cast<S*>(&x);
#pragma unroll
      for (int i = 0; i < vec; ++i) e[i] = r.scale * e[i];
      reinterpret_cast<uint4*>(r.rv + vd)[j] = x;
    }
  }
}

template <class S>
struct unreversal {
  const S *ro, *g;  // o′ [B][Tp][H][V]; the call's gates
  S *dv, *dh0;      // dh0 null, or holding the walk's final state
  int B, H, K, V;
  int64_t T, Tp;
};

// dv_s = o′_{Tp−1−s}, a block a token row (b, s), a thread a 16-byte vector; then
// dh0 ← e^{g_0} ⊙ dh0, a block a state row (b, h, feature).
template <class S>
__global__ void dv_from_reversed_kernel(unreversal<S> u) {
  constexpr int vec = 16 / sizeof(S);
  const int64_t tokens = static_cast<int64_t>(u.B) * u.T;
  const int64_t rows = tokens + (u.dh0 ? static_cast<int64_t>(u.B) * u.H * u.K : 0);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    if (row < tokens) {
      const int64_t b = row / u.T, s = row % u.T, tau = u.Tp - 1 - s;  // source_token's inverse
      const uint4* from = reinterpret_cast<const uint4*>(u.ro + (b * u.Tp + tau) * u.H * u.V);
      uint4* to = reinterpret_cast<uint4*>(u.dv + row * u.H * u.V);
      for (int j = threadIdx.x; j < u.H * u.V / vec; j += blockDim.x) to[j] = from[j];
    } else {
      const int64_t e = row - tokens, bh = e / u.K;
      const S g0 = u.g[((bh / u.H) * u.T * u.H + bh % u.H) * u.K + e % u.K];
      S w;
      if constexpr (sizeof(S) == 8)
        w = exp(g0);
      else
        w = expf(g0);
      for (int j = threadIdx.x; j < u.V; j += blockDim.x) u.dh0[e * u.V + j] *= w;
    }
  }
}

}  // namespace glabench::chunked::fp_backward
