// The sequence split's pieces in the bf16 walks (walk_plan.hpp): a first pass leaves each
// piece's state contribution and summed gates in the workspace (store_piece), and a
// segment's walk starts from the state carried across the pieces before it
// (carry_over_piece). The forward (forward_bf16_mma.cuh) and the backward's state and dS
// walks (backward_bf16_mma_states.cuh) split alike.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk {

// A state carried across piece m of the sequence split: S ← 2^{dgate}·S + dstate (the
// piece's contribution from chunk_walk_segment_states_kernel, or the backward's
// chunk_walk_segment_dstates_kernel).
__device__ __forceinline__ void carry_over_piece(const args& a, int m, state_rows f, int lane,
                                                 float (&S)[8][4]) {
  const int c2 = (lane & 3) << 1;
  const float* ds = split_state(a, m);
  const float d_lo = tc::ex2(split_gate(a, m)[f.lo]), d_hi = tc::ex2(split_gate(a, m)[f.hi]);
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const float2 x = *reinterpret_cast<const float2*>(ds + f.lo * BV + 8 * jn + c2);
    const float2 y = *reinterpret_cast<const float2*>(ds + f.hi * BV + 8 * jn + c2);
    S[jn][0] = fmaf(d_lo, S[jn][0], x.x), S[jn][1] = fmaf(d_lo, S[jn][1], x.y);
    S[jn][2] = fmaf(d_hi, S[jn][2], y.x), S[jn][3] = fmaf(d_hi, S[jn][3], y.y);
  }
}

// A piece's contribution and summed gates into the split's workspace.
__device__ __forceinline__ void store_piece(const args& a, int piece, state_rows f, int lane,
                                            const float (&S)[8][4], float gate_lo, float gate_hi) {
  float* ds = split_state(a, piece);
  const int c2 = (lane & 3) << 1;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    *reinterpret_cast<float2*>(ds + f.lo * BV + 8 * jn + c2) = make_float2(S[jn][0], S[jn][1]);
    *reinterpret_cast<float2*>(ds + f.hi * BV + 8 * jn + c2) = make_float2(S[jn][2], S[jn][3]);
  }
  if (blockIdx.x == 0 && (lane & 3) == 0)
    split_gate(a, piece)[f.lo] = gate_lo, split_gate(a, piece)[f.hi] = gate_hi;
}

}  // namespace glabench::chunked::walk
