// The fp32 and fp64 backward's state passes on the forward walks (forward_fp32_3xtf32.cuh,
// forward_fp64_dmma.cuh), ahead of chunk_fp_grads_kernel (backward_fp_mma_grads.cuh):
//
//   1. the walk, outputs off, leaves the state S_n before every 64-token chunk n;
//   2. the walk on the sequence backwards (args::rev), padded at its front to whole chunks
//      (Tp = NT·64 tokens; reversed token τ is token s = Tp − 1 − τ, none where s ≥ T;
//      reversed_tokens.hpp), reading q′ = k_s, k′ = q_s, v′ = scale·do_s and the gates one
//      token on, g′ = g_{s+1} (0 at s = T − 1 and in the padding), from h0′ = dht, scale 1,
//      is the backward's dS walk. Its state after reversed token τ is
//      Σ_{s′ ≥ s} e^{G_{s′} − G_s} q_{s′} ⊗ scale·do_{s′} + e^{G_{T−1} − G_s} dht, so its
//      output o′_τ is dv_s (written to token s), its final state e^{−g_0} ⊙ dh0, and the
//      state R_n it leaves before the reversed chunk that holds chunk n is
//      e^{−g[64(n+1)]} ⊙ dS_n (dS_{NT−1} = R_{NT−1} = dht);
//   3. dh0_factors_kernel scales dh0 by e^{g_0}; the gradient kernel takes R_n's row
//      factors after its sums.
//
// Every exponent of the walks stays a difference of gates ≤ 0, as in the forward; the
// WMMA kernels' state, dS and dv passes are not needed. A sequence-parallel rank's fp32
// or fp64 call runs here whole, its carried states as h0 and dht (launch.cu, whole_call).
// fp16 storage runs the fp32 walks and gradient kernel on its halves (In = __half): each
// reads and writes fp16 itself.
#pragma once

#include <cstdint>

#include "reversed_tokens.hpp"

namespace glabench::chunked::fp_backward {

template <class S, class In = S>
struct dh0_factors {
  const In* g;  // the call's gates, in the tokens' storage
  S* dh0;       // holding the dS walk's final state
  int H, K, V;
  int64_t T;
};

// dh0 ← e^{g_0} ⊙ dh0, a block a state row (b, h, feature) of `rows`.
template <class S, class In>
__global__ void dh0_factors_kernel(dh0_factors<S, In> u, int64_t rows) {
  for (int64_t e = blockIdx.x; e < rows; e += gridDim.x) {
    const int64_t bh = e / u.K;
    const S g0 = static_cast<S>(u.g[((bh / u.H) * u.T * u.H + bh % u.H) * u.K + e % u.K]);
    S w;
    if constexpr (sizeof(S) == 8)
      w = exp(g0);
    else
      w = expf(g0);
    for (int j = threadIdx.x; j < u.V; j += blockDim.x) u.dh0[e * u.V + j] *= w;
  }
}

}  // namespace glabench::chunked::fp_backward
