// Stage 3 of the chunk walk — the seed's `fused_chunk_gla_fwd_kernel`, the state pass:
// S_n handed to stage 5 as a bf16 operand, and S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v
// on the warp's rows, in registers.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk {

// ---- stage 3: the state -------------------------------------------------------------
// S_n into shared memory as the bf16 operand that walk_combine reads. One rounding: S's
// residual moved o's rel_l2 by 0.4–3.9 % (bench/bf16_o_error_model.py) for a sixth of the
// walk's tensor-core work.
__device__ __forceinline__ void walk_state_to_shared(unsigned char* smem, const float (&S)[8][4],
                                                     state_rows f, int lane) {
  const int c2 = (lane & 3) << 2;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    at<uint32_t>(smem, layout::s + tc::swizzle<VROW>(f.lo, jn) + c2) =
        tc::pack_bf16(S[jn][0], S[jn][1]);
    at<uint32_t>(smem, layout::s + tc::swizzle<VROW>(f.hi, jn) + c2) =
        tc::pack_bf16(S[jn][2], S[jn][3]);
  }
}

// The summed log2 gates of sub-chunks m0 … m1−1 in state row `row`, in order.
__device__ __forceinline__ float sub_chunk_gates(const unsigned char* smem, int row, int m0,
                                                 int m1) {
  const float* t = reinterpret_cast<const float*>(smem + layout::tots);
  float x = t[m0 * KP + row];
#pragma unroll
  for (int m = m0 + 1; m < m1; ++m) x += t[m * KP + row];
  return x;
}

// S ← 2^{x} ⊙ S on the warp's rows, x summed over sub-chunks m0 … m1−1 of each row.
__device__ __forceinline__ void decay_state(const unsigned char* smem, float (&S)[8][4],
                                            state_rows f, int m0, int m1) {
  const float d_lo = tc::ex2(sub_chunk_gates(smem, f.lo, m0, m1)),
              d_hi = tc::ex2(sub_chunk_gates(smem, f.hi, m0, m1));
#pragma unroll
  for (int jn = 0; jn < 8; ++jn)
    S[jn][0] *= d_lo, S[jn][1] *= d_lo, S[jn][2] *= d_hi, S[jn][3] *= d_hi;
}

// S += keysᵀ·v (rows of warp w; the keys' C × K tile transposed by ldmatrix).
__device__ __forceinline__ void add_keys_values(uint32_t keys, uint32_t v_tile,
                                                const lane_offsets& lo, float (&S)[8][4]) {
#pragma unroll
  for (int ks = 0; ks < C / 16; ++ks) {
    uint32_t a[4];
    tc::ldsm_x4_trans(a, keys + lo.t_state + ks * 16 * KROW);
#pragma unroll
    for (int np = 0; np < BV / 16; ++np) {
      uint32_t b[4];
      tc::ldsm_x4_trans(b, v_tile + lo.t_vals[np] + ks * 16 * VROW);
      tc::mma(S[2 * np], a, b[0], b[1]);
      tc::mma(S[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v  (rows of warp w).
__device__ __forceinline__ void walk_state_update(const unsigned char* smem, uint32_t sm,
                                                  uint32_t v_tile, const lane_offsets& lo,
                                                  float (&S)[8][4], state_rows f) {
  decay_state(smem, S, f, 0, SUBS);
  add_keys_values(sm + layout::khat, v_tile, lo, S);
}

// A chunk without strong features (walk_prepare_qg_kg, k̂ not written): S ←
// 2^{T_3} ⊙ (2^{T_0 + T_1 + T_2} ⊙ S + k̄⁽³⁾ᵀ·v), k̄⁽³⁾ the keys decayed to sub-chunk 3's start.
__device__ __forceinline__ void walk_state_update_keys(const unsigned char* smem, uint32_t sm,
                                                       uint32_t v_tile, const lane_offsets& lo,
                                                       float (&S)[8][4], state_rows f) {
  decay_state(smem, S, f, 0, SUBS - 1);
  add_keys_values(sm + layout::kbar + kbar_row0(SUBS - 1) * KROW, v_tile, lo, S);
  decay_state(smem, S, f, SUBS - 1, SUBS);
}

// A mild chunk's state (walk_prepare_qg_kg_mild), on the chunk's reference. From its
// middle: walk_state_to_middle, S ← 2^{T_0 + T_1} ⊙ S, before walk_state_to_shared, so that
// stage 5 reads it beside q̄ (q̃·S_n = q̄·(2^{T_0 + T_1} ⊙ S_n)). After stage 5,
// walk_state_update_mild: S ← 2^{G[C−1] − reference} ⊙ (S + k̄ᵀ·v) on k̄'s rows 0 … 63. Neither
// q̃ nor k̂ is written.
__device__ __forceinline__ void walk_state_to_middle(const unsigned char* smem, float (&S)[8][4],
                                                     state_rows f) {
  decay_state(smem, S, f, 0, SUBS / 2);
}
__device__ __forceinline__ void walk_state_update_mild(const unsigned char* smem, uint32_t sm,
                                                       uint32_t v_tile, const lane_offsets& lo,
                                                       float (&S)[8][4], state_rows f,
                                                       bool middle) {
  add_keys_values(sm + layout::kbar, v_tile, lo, S);
  if (middle)
    decay_state(smem, S, f, SUBS / 2, SUBS);
  else
    decay_state(smem, S, f, 0, SUBS);
}

}  // namespace glabench::chunked::walk
