// Stage 2 — the seed's `prepare_qg_kg`: queries and keys carrying their decays, as the
// tensor-core operands of the state pass (stage 3).
//
//   q̃[i] = q[i] ⊙ e^{G[i]}              the decay from the chunk's start to token i
//   k̂[j] = k[j] ⊙ e^{G[C−1] − G[j]}     the decay from token j to the chunk's end
//
// Both exponents are ≤ 0. The seed folds the output scale into q̃; here it multiplies
// o once at the end (stage 5), except where a caller passes it as `factor`.
#pragma once

#include "traits.cuh"

namespace glabench::chunked {

template <class Tr>
__device__ void prepare_qg(typename Tr::op_t* qg, int ldo, const typename Tr::acc_t* q,
                           const typename Tr::gate_t* G, int ld, int cols,
                           typename Tr::acc_t factor) {
  using op_t = typename Tr::op_t;
  using acc_t = typename Tr::acc_t;
  for (int i = threadIdx.x; i < kChunk * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    qg[r * ldo + c] =
        to_op<op_t>(factor * q[r * ld + c] * Tr::exp(static_cast<acc_t>(G[r * ld + c])));
  }
}

template <class Tr>
__device__ void prepare_kg(typename Tr::op_t* kg, int ldo, const typename Tr::acc_t* k,
                           const typename Tr::gate_t* G, int ld, int cols) {
  using op_t = typename Tr::op_t;
  using acc_t = typename Tr::acc_t;
  const typename Tr::gate_t* G_last = G + (kChunk - 1) * ld;
  for (int i = threadIdx.x; i < kChunk * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    kg[r * ldo + c] =
        to_op<op_t>(k[r * ld + c] * Tr::exp(static_cast<acc_t>(G_last[c] - G[r * ld + c])));
  }
}

}  // namespace glabench::chunked
