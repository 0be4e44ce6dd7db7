// Stage 1 — the seed's `fwd_decay_cumsum`: the cumulative gate inside a chunk.
//
//   G[i][c] = g[0][c] + … + g[i][c]      (natural log, ≤ 0, non-increasing in i)
//
// The seed accumulates log2 gates in 16-token windows; here the window is the 64-token
// chunk and the log stays natural. Every later exponential is of a difference of two
// of these sums taken in the order that makes it ≤ 0, so gates of −30 on one token, of
// −10⁴ over a chunk, or of exactly 0 stay finite in every dtype.
#pragma once

#include "chunk_traits.cuh"

namespace glabench::chunked {

// In place on a kChunk×cols slab of gates in shared memory, one thread a column, in
// token order. The order matters: a difference G[i] − G[j] is then the rounded sum of
// the same gates wherever it is formed, and the padded tokens after a ragged end (g = 0)
// repeat the last real G exactly, so e^{G[C−1] − G[last]} is exactly 1. The sums are
// fp64 for fp32 storage (traits::gate_t): a decay e^{G[i] − G[j]} then carries the
// rounding of its own exponent, not ulp(|G|) of a chunk's whole cumulative gate.
template <class T>
__device__ void fwd_decay_cumsum(T* G, int ld, int cols) {
  for (int c = threadIdx.x; c < cols; c += kThreads) {
    T s = 0;
    for (int i = 0; i < kChunk; ++i) {
      s += G[i * ld + c];
      G[i * ld + c] = s;
    }
  }
}

}  // namespace glabench::chunked
