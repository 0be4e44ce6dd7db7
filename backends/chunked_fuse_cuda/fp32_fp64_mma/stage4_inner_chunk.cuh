// Stage 4 of the fp32/fp64 chunk walk — the seed's `fwd_inner_chunk`: the chunk's masked
// scores A[t][s] = Σ_f q[t,f]·k[s,f]·2^{G[t,f] − G[s,f]} (s ≤ t) into shared memory, on
// the tensor cores for a mild chunk (four partial tiles), pair by pair for the others.
#pragma once

#include <type_traits>

#include "layout.cuh"

namespace glabench::chunked::walk_fp {

// ---- stage 4: fwd_inner_chunk --------------------------------------------------------
// Any chunk: each score as a sum over features of q[t,f]·k[s,f]·2^{d}, d the pair's own
// gates g[s+1] + … + g[t] (log2, fp64, ≤ 0) summed in order — no reference, so no factor
// above 1, whatever the gates. Warp w of 8 takes features 32·(w%4) … and the keys s of
// parity w/4; each score's lanes are summed by shuffles into part[w%4][t][s] (rows of PS
// elements). Reads the raw q, k and g of layout L.
// Out of line: the walk's loop stays small in the instruction cache.
template <class T, class Z, class L, int PS>
__device__ __noinline__ void fp_pair_partials(const T* buf, T* part, int warp, int lane) {
  const int f = 32 * (warp & 3) + lane;
  T* mine = part + (warp & 3) * Z::C * PS;
  for (int s = warp >> 2; s < Z::C; s += 2) {
    const double ks = buf[L::k + swz<T, Z::KP>(s, f)];
    double d = 0.0;
    for (int t = s; t < Z::C; ++t) {
      const int at = swz<T, Z::KP>(t, f);
      if (t > s) d = fma(static_cast<double>(buf[L::g + at]), kLog2e, d);
      double x = static_cast<double>(buf[L::q + at]) * ks * exp2(d);
#pragma unroll
      for (int w = 16; w >= 1; w >>= 1) x += __shfl_xor_sync(0xffffffffu, x, w);
      if (lane == 0) mine[t * PS + s] = static_cast<T>(x);
    }
  }
}
// The pipelined fp32 walk's scores of a mixed chunk's strong features (fp32_pipeline.cuh's
// kMixed), pair by pair as in fp_pair_partials: producer thread pt takes the pair
// (t, s) = (pt / C, pt % C) and sums its terms q[t,f]·k[s,f]·2^{g[s+1] + … + g[t]} over the
// features f of the `strong` bit masks, in fp64, into pairs[t][s] (rows of PS floats; 0
// above the diagonal). Reads the raw q and k tiles and `prefix`, stage 1's fp64 log2 gates
// summed from the chunk's start ([f][u], rows of C + 1: fp32_pipeline.cuh), whose
// difference is each pair's exponent — the terms' loop carries no chain of sums.
template <class Z, class L>
__device__ __forceinline__ void fp_strong_feature_pairs(float* buf, const unsigned* strong,
                                                        const double* prefix, int pt) {
  static_assert(Z::C * Z::C == Z::PTHREADS, "a producer thread a pair");
  constexpr int PR = Z::C + 1;
  const int t = pt / Z::C, s = pt % Z::C;
  double sum = 0.0;
  for (int w = 0; w < Z::KP / 32; ++w)
    for (unsigned m = strong[w]; m != 0; m &= m - 1) {
      const int f = 32 * w + __ffs(m) - 1;
      // fp32's exponential of the fp64 difference: the term |d|·2^-24 of itself off, under
      // 2^-25 of |q·k| (the chunk's other terms' scale). Pairs above the diagonal are
      // computed alike (every thread of a warp reads together) and dropped below.
      const double d = prefix[f * PR + t] - prefix[f * PR + s];
      sum += static_cast<double>(buf[L::q + swz<float, Z::KP>(t, f)]) *
             buf[L::k + swz<float, Z::KP>(s, f)] * exp2f(static_cast<float>(d));
    }
  buf[L::pairs + t * Z::PS + s] = s <= t ? static_cast<float>(sum) : 0.f;
}

// A mild chunk's scores, one reference for the chunk (C = 16, one m16 row block): q̃·k̃ᵀ,
// split over 8 warps — warp w takes key columns 8·(w%2) … and features 32·(w/2) …, into
// the partial part[w/2][t][s] (rows of Z::PS). Each product q̃[t]·k̃[s] with s ≤ t is
// q·k·2^{G[t]−G[s]} ≤ |q·k|; those above the diagonal, up to 2^{kMildLog2} larger, are
// masked where the four partials are summed in order: stage 5 (fp_combine_t_scores, fp64's
// consumers). q̃ and k̃ in the walk's operand tiles (fp32: hi in buf, lo in q_lo
// and k_lo).
template <class T, class Z, class L>
__device__ __forceinline__ void fp_inner_chunk_by_quarters(const T* buf, const T* q_lo,
                                                           const T* k_lo, T* part, int warp,
                                                           int lane) {
  using P = mma_policy<T>;
  using T2 = std::conditional_t<sizeof(T) == 4, float2, double2>;
  static_assert(Z::C == P::TM && Z::KP == 4 * 32, "two key tiles, four quarters");
  const int c0 = (warp & 1) * P::TN, fq = warp >> 1;
  T acc[2][P::NACC] = {};
#pragma unroll
  for (int i = 0; i < 32 / P::TK; ++i) {
    const int k0 = 32 * fq + i * P::TK;
    P::mma(acc[i & 1], P::template lds_a<Z::KP>(buf + L::q, q_lo, 0, k0, lane),
           P::template lds_b<Z::KP>(buf + L::k, k_lo, c0, k0, lane));
  }
#pragma unroll
  for (int e = 0; e < P::NACC; e += 2)
    *reinterpret_cast<T2*>(part + (fq * Z::C + acc_row(lane, e)) * Z::PS + c0 + acc_col(lane, e)) =
        T2{acc[0][e] + acc[1][e], acc[0][e + 1] + acc[1][e + 1]};
}

}  // namespace glabench::chunked::walk_fp
