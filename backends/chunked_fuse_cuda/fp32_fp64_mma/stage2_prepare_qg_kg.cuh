// Stage 2 of the fp32/fp64 chunk walk — the seed's `prepare_qg_kg`: the operands with
// their decays, in place over the chunk's q, k and g tiles.
#pragma once

#include "stage1_decay_cumsum.cuh"

namespace glabench::chunked::walk_fp {

// ---- stage 2: prepare_qg_kg ----------------------------------------------------------
// Thread (f, h), for each of its tokens t:
//   q̃[t] = q[t]·2^{G[t]}                  (≤ |q|; stage 3's output and stage 4's query)
//   k̂[t] = k[t]·2^{G[C−1] − G[t]}          (≤ |k|; the state update's key)
//   k̃[t] = k[t]·2^{−G[t]}                  (mild chunks only: stage 4's key, ≤ |k|·2^{kMildLog2})
// handed to the walk's `out`: out.mild(at, q̃, k̃, e) in a mild chunk, where k̂ = k̃·e with
// e = 2^{G[C−1]} (one exponential an element fewer), else out.strong(at, q̃, k̂), whose
// exponent is a difference inside the chunk, exact to ulp(|G|) in fp64. `at` is the
// token's element in the chunk's tiles; E[f] = e for the state update.
template <class T, class Z, class L, class Out>
__device__ __forceinline__ void fp_prepare_operands(const T* buf, T* E, const double* tots, int f,
                                                    int h, const double (&l)[Z::C / 2], bool mild,
                                                    Out out) {
  constexpr int H2 = Z::C / 2;
  const chunk_gates<Z::KP> cg(tots, f, h);
  const T e = exp2_of<T>(cg.last);
  if (h == 1) E[f] = e;
#pragma unroll
  for (int u = 0; u < H2; ++u) {
    const int at = swz<T, Z::KP>(h * H2 + u, f);
    const T q = buf[L::q + at], k = buf[L::k + at];
    const double G = cg.off + l[u];
    if (mild) {
      T up, down;
      exp2_both<T>(G, up, down);
      out.mild(at, q * up, k * down, e);
    } else {
      out.strong(at, q * exp2_of<T>(G), k * exp2_of<T>(cg.last - G));
    }
  }
}

}  // namespace glabench::chunked::walk_fp
