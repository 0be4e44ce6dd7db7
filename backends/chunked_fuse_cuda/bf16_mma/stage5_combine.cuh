// Stage 5 of the chunk walk — the seed's combine of inner and inter (a PyTorch add
// there): o = q̃·S + A·v in one accumulator, A fed from stage 4's registers.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk {

// ---- stages 3 (output) and 5: combine ------------------------------------------------
// o for rows of sub-chunk mt and the warp's 32 columns (lane_offsets::t_half):
// q̃·S + (A_hi + A_lo)·v; a mild chunk's q̄·S, S decayed to the chunk's end.
template <int MT>
__device__ __forceinline__ void walk_combine(uint32_t sm, uint32_t v_tile, const lane_offsets& lo,
                                             bool mild, const float (&A)[8][4], float (&O)[4][4]) {
  constexpr int mt = MT;
#pragma unroll
  for (int jn = 0; jn < 4; ++jn) O[jn][0] = O[jn][1] = O[jn][2] = O[jn][3] = 0.f;
  const uint32_t q_rows = (mild ? layout::qbar : layout::qtil) + 16 * mt * KROW + lo.a_rows;
#pragma unroll
  for (int kk = 0; kk < KP / 16; ++kk) {
    uint32_t a[4];
    tc::ldsm_x4(a, sm + kstep(q_rows, kk));
#pragma unroll
    for (int np = 0; np < 2; ++np) {
      const uint32_t off = lo.t_half[np] + kk * 16 * VROW;
      uint32_t b[4];
      tc::ldsm_x4_trans(b, sm + layout::s + off);
      tc::mma(O[2 * np], a, b[0], b[1]);
      tc::mma(O[2 * np + 1], a, b[2], b[3]);
    }
  }
#pragma unroll
  for (int jp = 0; jp <= mt; ++jp) {
    uint32_t hi[4], lw[4];
    tc::split_bf16(A[2 * jp][0], A[2 * jp][1], hi[0], lw[0]);
    tc::split_bf16(A[2 * jp][2], A[2 * jp][3], hi[1], lw[1]);
    tc::split_bf16(A[2 * jp + 1][0], A[2 * jp + 1][1], hi[2], lw[2]);
    tc::split_bf16(A[2 * jp + 1][2], A[2 * jp + 1][3], hi[3], lw[3]);
#pragma unroll
    for (int np = 0; np < 2; ++np) {
      uint32_t b[4];
      tc::ldsm_x4_trans(b, v_tile + lo.t_half[np] + jp * 16 * VROW);
      tc::mma(O[2 * np], hi, b[0], b[1]);
      tc::mma(O[2 * np + 1], hi, b[2], b[3]);
      tc::mma(O[2 * np], lw, b[0], b[1]);
      tc::mma(O[2 * np + 1], lw, b[2], b[3]);
    }
  }
}

}  // namespace glabench::chunked::walk
