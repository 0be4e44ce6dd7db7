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
// A mild chunk (walk_prepare_qg_kg_mild) keeps its keys for every row in k̂.
// MT is the warp's row sub-chunk as a template argument: the loops over key blocks are
// then straight code, with no branches around mma.sync.
template <int MT>
__device__ __forceinline__ void walk_inner_chunk(const unsigned char* smem, uint32_t sm,
                                                 const lane_offsets& lo, int lane, bool mild,
                                                 bool strong_chunk, float (&A)[8][4]) {
  constexpr int mt = MT;
#pragma unroll
  for (int jt = 0; jt < 8; ++jt) A[jt][0] = A[jt][1] = A[jt][2] = A[jt][3] = 0.f;
  const uint32_t q_rows = layout::qbar + 16 * mt * KROW + lo.a_rows;
  const uint32_t k_rows = (mild ? layout::khat : layout::kbar + kbar_row0(mt) * KROW) + lo.b_rows;
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
// into corr[j][t][s]: each pair's decay a sum of its own gates, in order. Strong features
// are rare outside the fixtures built for them (about 1 in 12 000 sub-chunk features under
// −exp(N(−0.5, 1)) gates), so the warp takes its strong features one after another and
// spreads each one's 136 pairs over its lanes: lane (s, h) takes the pairs (s, s + h),
// (s, s + h + 2), …, summing over the features in registers. Each of the sub-chunk's two
// warps then adds one term a pair into a zeroed slot, so the order does not change the sum.
// The loops over features stay rolled: this code runs for a few chunks in a hundred, and
// unrolled over its 136 pairs it spent its time fetching instructions.
__device__ __forceinline__ float feature_at(const unsigned char* smem, uint32_t tile, int row,
                                            int f) {
  const float2 x = pair_at(smem, tile + pair_offset(row, f >> 1));
  return (f & 1) ? x.y : x.x;
}
__device__ void walk_inner_chunk_strong_gates(unsigned char* smem, int j, int p, bool strong0,
                                              bool strong1) {
  const int lane = threadIdx.x & 31, s = lane & 15, h = lane >> 4, row0 = SUB * j;
  constexpr int kPairs = SUB / 2;  // a lane's pairs, t = s + h + 2i ≤ SUB − 1
  float acc[kPairs] = {};
#pragma unroll 1
  for (int e = 0; e < 2; ++e) {  // feature 2p + e of each lane whose bit is set
    // (a ballot each time: an array indexed by the rolled e would live in local memory)
    unsigned lanes = __ballot_sync(0xffffffffu, e ? strong1 : strong0);
#pragma unroll 1
    while (lanes) {
      const int src = __ffs(lanes) - 1;
      lanes &= lanes - 1;
      const int f = 2 * __shfl_sync(0xffffffffu, p, src) + e;
      const float ks = feature_at(smem, layout::k, row0 + s, f);
      float d = 0.f;
      int t = s;
      if (h) {
        if (s + 1 < SUB) d = fmaf(feature_at(smem, layout::g, row0 + s + 1, f), kLog2e, d);
        t = s + 1;
      }
#pragma unroll
      for (int i = 0; i < kPairs; ++i) {
        if (t >= SUB) break;
        acc[i] = fmaf(feature_at(smem, layout::q, row0 + t, f) * ks, tc::ex2(d), acc[i]);
        if (t + 1 < SUB) d = fmaf(feature_at(smem, layout::g, row0 + t + 1, f), kLog2e, d);
        if (t + 2 < SUB) d = fmaf(feature_at(smem, layout::g, row0 + t + 2, f), kLog2e, d);
        t += 2;
      }
    }
  }
  float* corr = reinterpret_cast<float*>(smem + layout::corr) + j * SUB * SUB;
#pragma unroll
  for (int i = 0; i < kPairs; ++i) {
    const int t = s + h + 2 * i;
    if (t < SUB) atomicAdd(corr + t * SUB + s, acc[i]);
  }
}

}  // namespace glabench::chunked::walk
