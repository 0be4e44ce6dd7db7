// Stage 5 of the fp32/fp64 chunk walks — the seed's combine of inner and inter (a PyTorch
// add there): o = q̃·S + A·v, on the tensor cores, as oᵀ = Sᵀ·q̃ᵀ + vᵀ·Aᵀ from the state
// the consumer warps hold (stage3_state.cuh). fp64's is its walk's consumer loop
// (../forward_fp64_dmma.cuh).
#pragma once

#include "stage3_state.cuh"

namespace glabench::chunked::walk_fp {

// Score i of a mild chunk: its four feature quarters' partial tiles (C rows of PS each,
// fp_inner_chunk_by_quarters) summed in order.
template <class Z, class T>
__device__ __forceinline__ T quarters_sum(const T* part, int i) {
  constexpr int Q = Z::C * Z::PS;
  return ((part[i] + part[Q + i]) + part[2 * Q + i]) + part[3 * Q + i];
}

// ---- stages 3 (output) and 5 in the pipelined fp32 walk -------------------------------
// Consumer warp cw: oᵀ = Sᵀ·q̃ᵀ + vᵀ·Aᵀ for its 16 V rows and the chunk's C tokens (C/8
// column tiles), O[nt][e] at (V row 16·cw + acc_row, token 8·nt + acc_col). Sᵀ's tile j
// is the A fragment of the k-step over features 8j …, taken in the order 2c, 2c+1, c's
// two columns of the tile; q̃'s B fragment is then the pair at (token, 8j + 2c), one 8-byte
// load from each half of the operand (q̃ hi, q̃ lo). The three products of 3×TF32 go to two
// accumulators (the small terms, the large one), by k-step parity: eight chains in flight.
// A·v takes A's lower triangle: key tile ks meets token tiles nt ≥ ks.
// fp_combine_t: oᵀ = Sᵀ·q̃ᵀ into O; fp_combine_t_scores then adds vᵀ·Aᵀ, with the A
// fragments vᵀ that the state update shares (loaded in between: fewer live registers), and
// A's B fragments summed from stage 4's four partial tiles (fp32_pipeline.cuh).
template <class Z>
__device__ __forceinline__ void fp_combine_t(const float* q, const float* q_lo,
                                             const state_t_regs<Z>& S, int lane,
                                             float (&O)[Z::C / 8][4]) {
  using P = mma_policy<float>;
  constexpr int NT = Z::C / 8;
  const int g = lane >> 2, c = lane & 3;
  float big[2][NT][4] = {}, small[2][NT][4] = {};
  static_assert(Z::KP == 128, "swz_pair_lane's tile");
  int pair[4];  // the lane's part of its q̃ pairs' offsets
#pragma unroll
  for (int jj = 0; jj < 4; ++jj) pair[jj] = swz_pair_lane(g, c, jj);
#pragma unroll
  for (int j = 0; j < Z::KP / 8; ++j) {
    P::afrag a;
    P::split(S[j][0], a.hi[0], a.lo[0]);
    P::split(S[j][2], a.hi[1], a.lo[1]);
    P::split(S[j][1], a.hi[2], a.lo[2]);
    P::split(S[j][3], a.hi[3], a.lo[3]);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int at = pair[j % 4] + 1024 * nt + 32 * (j / 4);
      const uint2 h = *reinterpret_cast<const uint2*>(q + at),
                  l = *reinterpret_cast<const uint2*>(q_lo + at);
      const P::bfrag b{{h.x, h.y}, {l.x, l.y}};
      P::mma1(small[j & 1][nt], a.lo, b.hi);
      P::mma1(small[j & 1][nt], a.hi, b.lo);
      P::mma1(big[j & 1][nt], a.hi, b.hi);
    }
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      O[nt][e] = (big[0][nt][e] + big[1][nt][e]) + (small[0][nt][e] + small[1][nt][e]);
}
// `pairs`: null, or a fifth partial tile (a mixed chunk's strong features, rows of PS).
// kExactV: v exact in TF32 (fp16's tokens), its small term left out (mma.cuh).
template <class Z, bool kExactV = false>
__device__ __forceinline__ void fp_combine_t_scores(const float* part, const float* pairs,
                                                    const mma_policy<float>::afrag (&vt)[Z::C / 8],
                                                    int lane, float (&O)[Z::C / 8][4]) {
  using P = mma_policy<float>;
  constexpr int NT = Z::C / 8;
  const int g = lane >> 2, c = lane & 3, at = g * Z::PS + c;
  // A[t][s] (s ≤ t, else 0) for B (k = s, n = t): the partials summed in order.
  auto score = [&](int t0, int s) {
    const int i = at + t0 * Z::PS + s;
    float sum = quarters_sum<Z>(part, i);
    if (pairs) sum += pairs[i];
    return s + c > t0 + g ? 0.f : sum;
  };
#pragma unroll
  for (int ks = 0; ks < NT; ++ks)
#pragma unroll
    for (int nt = ks; nt < NT; ++nt) {
      P::bfrag b;
      P::split(score(8 * nt, 8 * ks), b.hi[0], b.lo[0]);
      P::split(score(8 * nt, 8 * ks + 4), b.hi[1], b.lo[1]);
      P::template mma<kExactV>(O[nt], vt[ks], b);
    }
}

}  // namespace glabench::chunked::walk_fp
