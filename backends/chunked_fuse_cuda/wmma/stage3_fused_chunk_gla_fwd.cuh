// Stage 3 — the seed's `fused_chunk_gla_fwd_kernel`: the chunk-to-chunk state pass, the
// only stage of the seed on tensor cores. For chunk n with state S (K×V, the state
// before the chunk's first token):
//
//   o_inter += q̃ · S                       (C×BK · BK×BV)   the inter-chunk output
//   S ← e^{G[C−1]} ⊙ S + k̂ᵀ · v            (BK×C · C×BV)    the state after the chunk
//
// Key features are independent in both, so a block may own any slab of S's rows.
#pragma once

#include "block_mma.cuh"
#include "traits.cuh"

namespace glabench::chunked {

// S[r][c] ← e^{G_last[r]}·S[r][c]; `save`, when given, receives S before the decay
// (each thread moves its own elements: no barrier between the two).
template <class Tr>
__device__ void decay_state(typename Tr::acc_t* S, int lds, const typename Tr::gate_t* G_last,
                            int rows, int cols, typename Tr::acc_t* save = nullptr,
                            int64_t save_stride = 0) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    const auto s = S[r * lds + c];
    if (save) save[r * save_stride + c] = s;
    S[r * lds + c] = s * Tr::exp(static_cast<typename Tr::acc_t>(G_last[r]));
  }
}

// S += k̂ᵀ · v: k̂ is the chunk's kChunk×rows slab (row-major), read transposed.
template <class Tr>
__device__ void add_chunk_to_state(typename Tr::acc_t* S, int lds, const typename Tr::op_t* kg,
                                   int ldk, const typename Tr::op_t* v, int ldv, int rows,
                                   int cols) {
  block_mma<Tr, lay::col, lay::row>(S, lds, kg, ldk, v, ldv, rows, cols, kChunk, true);
}

// o_inter += q̃ · S for a slab of S's rows (S as operand).
template <class Tr>
__device__ void inter_chunk_output(typename Tr::acc_t* o, int ldo, const typename Tr::op_t* qg,
                                   int ldq, const typename Tr::op_t* S, int lds, int rows,
                                   int cols) {
  block_mma<Tr, lay::row, lay::row>(o, ldo, qg, ldq, S, lds, kChunk, cols, rows, true);
}

}  // namespace glabench::chunked
