// Stage 1 — the seed's `fwd_decay_cumsum`: the cumulative gate inside a chunk.
//
//   G[i][c] = g[0][c] + … + g[i][c]      (natural log, ≤ 0, non-increasing in i)
//
// The seed accumulates log2 gates in 16-token windows; here the window is the 64-token
// chunk and the log stays natural. Every later exponential is of a difference of two
// of these sums taken in the order that makes it ≤ 0, so gates of −30 on one token, of
// −10⁴ over a chunk, or of exactly 0 stay finite in every dtype.
#pragma once

#include "traits.cuh"

namespace glabench::chunked {

// In place on a kChunk×COLS slab of gates in shared memory, by the whole block: each
// column is cut into kThreads/COLS segments summed in token order by one thread each,
// then every segment adds the totals of the segments before it, in order. Every G[i] is
// so a fixed sum of the same gates wherever it is formed, and the padded tokens after a
// ragged end (g = 0) repeat the last real G exactly, so e^{G[C−1] − G[last]} is exactly
// 1. The sums are fp64 for fp32 storage (traits::gate_t): a decay e^{G[i] − G[j]} then
// carries the rounding of its own exponent, not ulp(|G|) of a chunk's whole cumulative
// gate. Ends with a barrier.
// `at(i, c)` is element (i, c)'s index in G; the plain overload's rows are ld apart.
template <int COLS, class T, class At>
__device__ void fwd_decay_cumsum_at(T* G, At at) {
  constexpr int kSegs = kThreads / COLS, kLen = kChunk / kSegs;
  static_assert(kSegs * COLS == kThreads && kLen * kSegs == kChunk, "segments tile the chunk");
  const int c = threadIdx.x % COLS, seg = threadIdx.x / COLS;
  T s = 0;
#pragma unroll
  for (int i = seg * kLen; i < (seg + 1) * kLen; ++i) {
    s += G[at(i, c)];
    G[at(i, c)] = s;
  }
  __syncthreads();
  T carry = 0;
  for (int p = 0; p < seg; ++p) carry += G[at((p + 1) * kLen - 1, c)];
  __syncthreads();
  if (seg > 0)
#pragma unroll
    for (int i = seg * kLen; i < (seg + 1) * kLen; ++i) G[at(i, c)] += carry;
  __syncthreads();
}
template <int COLS, class T>
__device__ void fwd_decay_cumsum(T* G, int ld) {
  fwd_decay_cumsum_at<COLS>(G, [ld](int i, int c) { return i * ld + c; });
}

}  // namespace glabench::chunked
