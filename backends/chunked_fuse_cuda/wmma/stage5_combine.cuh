// Stage 5 — the seed's "combine inner and intra", a PyTorch add there. Here the
// intra-chunk product A·v runs on the tensor cores straight into the accumulator that
// holds the inter-chunk part, and the scale is applied once:
//
//   o = scale · (o_inter + A · v)
#pragma once

#include "block_mma.cuh"
#include "traits.cuh"

namespace glabench::chunked {

template <class Tr>
__device__ void combine_inner_inter(typename Tr::acc_t* o, int ldo, const typename Tr::op_t* A,
                                    int lda, const typename Tr::op_t* v, int ldv, int cols) {
  block_mma<Tr, lay::row, lay::row>(o, ldo, A, lda, v, ldv, kChunk, cols, kChunk, true);
}

}  // namespace glabench::chunked
