// Stage 3 of the chunk walk — the seed's `fused_chunk_gla_fwd_kernel`, the state pass:
// S_n handed to stage 5 as a bf16 operand, and S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v
// on the warp's rows, in registers.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk {

// ---- stage 3: the state -------------------------------------------------------------
// S_n into shared memory as the bf16 operand that walk_combine reads. One rounding: S's
// residual was worth 0.4–4 % of o's rel_l2 where the gates decay and 38 % under the cliff
// regime's zero gates, o still below fla's (bench/bf16_o_error_model.py), for a sixth of
// the walk's tensor-core work.
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

// S ← 2^{G[C−1]} ⊙ S on the warp's rows. A mild chunk (walk_prepare_qg_kg_mild) takes it
// before walk_state_to_shared, so that stage 5 reads q̃·S_n as q̄·(2^{G[C−1]} ⊙ S_n), and after
// stage 5 adds k̂ᵀ·v alone (add_keys_values).
__device__ __forceinline__ void decay_state(const unsigned char* smem, float (&S)[8][4],
                                            state_rows f) {
  const float d_lo = tc::ex2(chunk_gate_sum(smem, f.lo)),
              d_hi = tc::ex2(chunk_gate_sum(smem, f.hi));
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
  decay_state(smem, S, f);
  add_keys_values(sm + layout::khat, v_tile, lo, S);
}

}  // namespace glabench::chunked::walk
