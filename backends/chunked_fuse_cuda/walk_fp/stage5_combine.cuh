// Stage 5 of the fp32/fp64 chunk walk — the seed's combine of inner and inter (a PyTorch
// add there): o = q̃·S + A·v in one accumulator, on the tensor cores.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk_fp {

// ---- stages 3 (output) and 5: combine ------------------------------------------------
// Warp w: row block w/4 of the chunk, column tiles 2·(w%4) and 2·(w%4)+1 of the V slab.
// A's columns s > t are zero, so for row block rb A·v stops at its last row's column.
template <class T>
__device__ __forceinline__ void fp_combine(const T* buf, const T* q_lo, const T* St, const T* St_lo,
                                           const T* A, const T* A_lo, int warp, int lane,
                                           T (&O)[2][mma_policy<T>::NACC]) {
  using Z = sizes<T>;
  using P = mma_policy<T>;
  using L = layout<T>;
  const int r0 = (warp >> 2) * P::TM, n0 = 2 * (warp & 3) * P::TN;
  const T* v = buf + L::v;
  auto vx = [&](int kk, int n) { return v[swz<T, Z::BV>(kk, n)]; };
  // q̃·S over KP in two halves, each into its own accumulators: four chains of products in
  // flight instead of two.
  T O2[2][P::NACC] = {};
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < P::NACC; ++e) O[j][e] = T(0);
#pragma unroll 2
  for (int k0 = 0; k0 < Z::KP / 2; k0 += P::TK) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int kk = k0 + half * (Z::KP / 2);
      const typename P::afrag af = P::template lds_a<Z::KP>(buf + L::q, q_lo, r0, kk, lane);
#pragma unroll
      for (int j = 0; j < 2; ++j)
        P::mma(half ? O2[j] : O[j], af,
               P::template lds_b<Z::KP>(St, St_lo, n0 + j * P::TN, kk, lane));
    }
  }
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < P::NACC; ++e) O[j][e] += O2[j][e];
  for (int k0 = 0; k0 < r0 + P::TM; k0 += P::TK) {
    const typename P::afrag af = P::template lds_a<Z::C>(A, A_lo, r0, k0, lane);
#pragma unroll
    for (int j = 0; j < 2; ++j) P::mma(O[j], af, P::load_b(vx, k0, n0 + j * P::TN, lane));
  }
}

}  // namespace glabench::chunked::walk_fp
