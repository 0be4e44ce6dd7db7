// Stage 4 of the chunk walk — the seed's `fwd_inner_chunk`: the masked scores of a
// chunk, A = q̄·k̄ᵀ for each 16-row sub-chunk on the tensor cores, and the strong-gate
// fallback that sums a diagonal block's features pair by pair.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk {

// ---- stage 4: fwd_inner_chunk --------------------------------------------------------
// A for the 16 rows of sub-chunk mt against keys 0 … 16mt+15: eight m16n8 tiles (the
// first 2(mt+1) used), causal mask on the diagonal block, plus the strong-gate terms.
// The diagonal block, whose decays are the weakest and whose terms the largest, takes
// the residuals too: q̄·k̄ = q̄_hi·k̄_hi + q̄_lo·k̄_hi + q̄_hi·k̄_lo.
// A mild chunk (walk_prepare_qg_kg_mild) reads q̃ and k̃ (k̄ rows 0 … 63) instead.
// MT is the warp's row sub-chunk as a template argument: the loops over key blocks are
// then straight code, with no branches around mma.sync.
template <int MT>
__device__ __forceinline__ void walk_inner_chunk(const unsigned char* smem, uint32_t sm,
                                                 const lane_offsets& lo, int lane, bool mild,
                                                 bool strong_chunk, float (&A)[8][4]) {
  constexpr int mt = MT;
#pragma unroll
  for (int jt = 0; jt < 8; ++jt) A[jt][0] = A[jt][1] = A[jt][2] = A[jt][3] = 0.f;
  const uint32_t q_rows = (mild ? layout::qtil : layout::qbar) + 16 * mt * KROW + lo.a_rows;
  const uint32_t k_rows = layout::kbar + (mild ? 0 : kbar_row0(mt) * KROW) + lo.b_rows;
  const uint32_t kd_rows = layout::kdiag_lo + 16 * mt * KROW + lo.b_rows;
#pragma unroll
  for (int kk = 0; kk < KP / 16; ++kk) {
    uint32_t a[4], b[4];
    tc::ldsm_x4(a, sm + kstep(q_rows, kk));
#pragma unroll
    for (int jp = 0; jp < mt; ++jp) {
      tc::ldsm_x4(b, sm + kstep(k_rows, kk) + jp * 16 * KROW);
      tc::mma(A[2 * jp], a, b[0], b[1]);
      tc::mma(A[2 * jp + 1], a, b[2], b[3]);
    }
    uint32_t a_lo[4], b_lo[4];
    tc::ldsm_x4(b, sm + kstep(k_rows, kk) + mt * 16 * KROW);
    tc::ldsm_x4(a_lo, sm + kstep(layout::qbar_lo + 16 * mt * KROW + lo.a_rows, kk));
    tc::ldsm_x4(b_lo, sm + kstep(kd_rows, kk));
    tc::mma(A[2 * mt], a, b[0], b[1]);
    tc::mma(A[2 * mt + 1], a, b[2], b[3]);
    tc::mma(A[2 * mt], a_lo, b[0], b[1]);
    tc::mma(A[2 * mt + 1], a_lo, b[2], b[3]);
    tc::mma(A[2 * mt], a, b_lo[0], b_lo[1]);
    tc::mma(A[2 * mt + 1], a, b_lo[2], b_lo[3]);
  }
  const int tr = lane >> 2, sc = (lane & 3) << 1;
  const float* corr = reinterpret_cast<const float*>(smem + layout::corr) + mt * SUB * SUB;
#pragma unroll
  for (int jt = 2 * mt; jt < 2 * mt + 2; ++jt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int t = tr + (e >> 1) * 8, s = (jt & 1) * 8 + sc + (e & 1);
      if (s > t)
        A[jt][e] = 0.f;
      else if (strong_chunk)
        A[jt][e] += corr[t * SUB + s];
    }
  }
}

// ---- stage 4, strong gates: the diagonal block pair by pair --------------------------
// For the features of sub-chunk j whose gates sum below −kSafeLog2, adds
//   Σ_f q[t][f]·k[s][f]·2^{g[s+1] + … + g[t]}      (s ≤ t in the sub-chunk)
// into corr[j][t][s]: each pair's decay a sum of its own gates. Each of the sub-chunk's two
// warps adds one term a pair into a zeroed slot, so the order does not change the sum.
// Strong features are rare outside the fixtures built for them (about 1 in 900 under
// −exp(N(−0.5, 1)) gates): a warp with one strong lane lets that lane sum its pairs alone,
// with no shuffles; a warp with more reduces each pair across its lanes.
__device__ void walk_inner_chunk_strong_gates(unsigned char* smem, int j, int p, bool strong0,
                                              bool strong1) {
  const bool alone = __popc(__ballot_sync(0xffffffffu, strong0 || strong1)) == 1;  // warp-uniform
  if (alone && !(strong0 || strong1)) return;
  float g0[SUB], g1[SUB], q0[SUB], q1[SUB], k0[SUB], k1[SUB];
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const uint32_t off = pair_offset(SUB * j + u, p);
    const float2 g = pair_at(smem, layout::g + off), q = pair_at(smem, layout::q + off),
                 k = pair_at(smem, layout::k + off);
    g0[u] = g.x, g1[u] = g.y;
    q0[u] = strong0 ? q.x : 0.f, q1[u] = strong1 ? q.y : 0.f;
    k0[u] = k.x, k1[u] = k.y;
  }
  float* corr = reinterpret_cast<float*>(smem + layout::corr) + j * SUB * SUB;
#pragma unroll
  for (int s = 0; s < SUB; ++s) {
    float d0 = 0.f, d1 = 0.f;
#pragma unroll
    for (int t = s; t < SUB; ++t) {
      if (t > s) d0 = fmaf(g0[t], kLog2e, d0), d1 = fmaf(g1[t], kLog2e, d1);
      float x = q0[t] * k0[s] * tc::ex2(d0) + q1[t] * k1[s] * tc::ex2(d1);
      if (alone) {
        atomicAdd(corr + t * SUB + s, x);
        continue;
      }
#pragma unroll
      for (int w = 16; w >= 1; w >>= 1) x += __shfl_xor_sync(0xffffffffu, x, w);
      if ((threadIdx.x & 31) == 0) atomicAdd(corr + t * SUB + s, x);
    }
  }
}

}  // namespace glabench::chunked::walk
