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

// One thread a 16-byte vector: first every (row, K vector) of q′, k′ and g′, then every
// (row, V vector) of v′; rows (b, τ, h).
template <class S>
__global__ void reverse_tokens_kernel(reversal<S> r) {
  constexpr int vec = 16 / sizeof(S);
  const int kv = r.K / vec, vv = r.V / vec;
  const int64_t rows = static_cast<int64_t>(r.B) * r.Tp * r.H;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < rows * (kv + vv); i += stride) {
    const bool keys = i < rows * kv;
    const int64_t j = keys ? i : i - rows * kv;
    const int per = keys ? kv : vv, D = keys ? r.K : r.V;
    const int64_t row = j / per;
    const int c = static_cast<int>(j % per) * vec, h = static_cast<int>(row % r.H);
    const int64_t tau = (row / r.H) % r.Tp, b = row / r.H / r.Tp;
    const int64_t s = reversed::source_token(tau, r.Tp, r.T),
                  gs = reversed::gate_token(tau, r.Tp, r.T);
    auto at = [&](int64_t t) { return ((b * r.T + t) * r.H + h) * D + c; };
    const int64_t dst = row * D + c;
    const bool real = s >= 0;
    if (keys) {
      uint4 q{}, k{}, g{};
      if (real) {
        q = *reinterpret_cast<const uint4*>(r.q + at(s));
        k = *reinterpret_cast<const uint4*>(r.k + at(s));
      }
      if (gs >= 0) g = *reinterpret_cast<const uint4*>(r.g + at(gs));
      *reinterpret_cast<uint4*>(r.rq + dst) = k;
      *reinterpret_cast<uint4*>(r.rk + dst) = q;
      *reinterpret_cast<uint4*>(r.rg + dst) = g;
    } else {
#pragma unroll
      for (int e = 0; e < vec; ++e) r.rv[dst + e] = real ? r.scale * r.d_o[at(s) + e] : S(0);
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

// dv_s = o′_{Tp−1−s}, a thread a 16-byte vector; then dh0 ← e^{g_0} ⊙ dh0, a thread an element.
template <class S>
__global__ void dv_from_reversed_kernel(unreversal<S> u) {
  constexpr int vec = 16 / sizeof(S);
  const int vv = u.V / vec;
  const int64_t copies = static_cast<int64_t>(u.B) * u.T * u.H * vv;
  const int64_t states = u.dh0 ? static_cast<int64_t>(u.B) * u.H * u.K * u.V : 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < copies + states;
       i += stride) {
    if (i < copies) {
      const int64_t row = i / vv;  // (b, s, h)
      const int c = static_cast<int>(i % vv) * vec, h = static_cast<int>(row % u.H);
      const int64_t s = (row / u.H) % u.T, b = row / u.H / u.T;
      const int64_t tau = u.Tp - 1 - s;  // reversed::source_token's inverse
      const int64_t from = ((b * u.Tp + tau) * u.H + h) * u.V + c;
      *reinterpret_cast<uint4*>(u.dv + row * u.V + c) =
          *reinterpret_cast<const uint4*>(u.ro + from);
    } else {
      const int64_t e = i - copies, bh = e / (static_cast<int64_t>(u.K) * u.V);
      const int f = static_cast<int>(e / u.V % u.K);
      const S g0 = u.g[((bh / u.H) * u.T * u.H + bh % u.H) * u.K + f];
      if constexpr (sizeof(S) == 8)
        u.dh0[e] *= exp(g0);
      else
        u.dh0[e] *= expf(g0);
    }
  }
}

}  // namespace glabench::chunked::fp_backward
