// Stage 4 — the seed's `fwd_inner_chunk`: the masked scores inside a chunk,
//
//   A[i][j] = Σ_c q[i][c] k[j][c] e^{G[i][c] − G[j][c]}      j ≤ i,
//
// summed over the K slabs a block walks. The seed exponentiates every pair's difference
// in 16-token chunks, off the tensor cores. Here the 64-token chunk is cut into four
// 16-token sub-chunks:
// - a block below the diagonal (rows in sub-chunk a, columns in an earlier one) is a
//   tensor-core product relative to the reference G[a0], the cumulative gate at a's
//   first token: q[i]·e^{G[i] − G[a0]} (i ≥ a0) times k[j]·e^{G[a0] − G[j]} (j < a0),
//   both factors ≤ 1, so nothing overflows and a vanishing factor means a vanishing
//   product;
// - a diagonal block goes pair by pair, its decays running products of the tokens' own
//   e^{g} ≤ 1.
#pragma once

#include "block_mma.cuh"
#include "traits.cuh"

namespace glabench::chunked {

inline constexpr int kSubs = kChunk / kSub;
// Keys before each sub-chunk a ≥ 1, stacked: a's kSub·a rows start at row kSub·a(a−1)/2.
inline constexpr int kStackRows = kSub * kSubs * (kSubs - 1) / 2;

__host__ __device__ constexpr int stack_row0(int a) {
  return kSub * a * (a - 1) / 2;
}

// qs[i] = q[i]·e^{G[i] − G[a0]} for rows i ≥ kSub (a0: the first row of i's sub-chunk).
template <class Tr>
__device__ void sub_chunk_queries(typename Tr::op_t* qs, int ldo, const typename Tr::acc_t* q,
                                  const typename Tr::gate_t* G, int ld, int cols) {
  using op_t = typename Tr::op_t;
  using acc_t = typename Tr::acc_t;
  for (int i = threadIdx.x; i < (kChunk - kSub) * cols; i += kThreads) {
    const int r = kSub + i / cols, c = i % cols;
    const int a0 = r / kSub * kSub;
    qs[r * ldo + c] =
        to_op<op_t>(q[r * ld + c] * Tr::exp(static_cast<acc_t>(G[r * ld + c] - G[a0 * ld + c])));
  }
}

// The stack of keys before each sub-chunk a ≥ 1: k[j]·e^{G[a0] − G[j]}, j < a0.
template <class Tr>
__device__ void sub_chunk_keys(typename Tr::op_t* ks, int ldo, const typename Tr::acc_t* k,
                               const typename Tr::gate_t* G, int ld, int cols) {
  using op_t = typename Tr::op_t;
  using acc_t = typename Tr::acc_t;
  for (int i = threadIdx.x; i < kStackRows * cols; i += kThreads) {
    const int row = i / cols, c = i % cols;
    int a = 1;  // row's sub-chunk: compared with constants, no loop
#pragma unroll
    for (int x = 2; x < kSubs; ++x) a += row >= stack_row0(x);
    const int j = row - stack_row0(a), a0 = a * kSub;
    ks[row * ldo + c] =
        to_op<op_t>(k[j * ld + c] * Tr::exp(static_cast<acc_t>(G[a0 * ld + c] - G[j * ld + c])));
  }
}

// A += this slab's scores. E holds the tokens' own decays e^g (load_gates); qs
// ([kChunk] rows) and ks ([kStackRows] rows) are scratch operands. Ends with a barrier.
template <class Tr>
__device__ void fwd_inner_chunk(typename Tr::acc_t* A, int lda, const typename Tr::acc_t* q,
                                const typename Tr::acc_t* k, const typename Tr::gate_t* G,
                                const typename Tr::acc_t* E, int ld, typename Tr::op_t* qs,
                                typename Tr::op_t* ks, int ldo) {
  using acc_t = typename Tr::acc_t;
  constexpr int cols = Tr::BK;
  sub_chunk_queries<Tr>(qs, ldo, q, G, ld, cols);
  sub_chunk_keys<Tr>(ks, ldo, k, G, ld, cols);
  // Diagonal blocks (their elements are no product's output below): thread (j, part)
  // owns column j and kPer of the features, and walks i through j's sub-chunk with the
  // decay e^{G[i] − G[j]} = E[j+1]·…·E[i] as a running product — a multiply a step
  // instead of an exponential a pair, every factor ≤ 1. The kParts partial sums of a
  // score meet by two shuffles (a pair-per-warp layout with a 32-lane reduction a score
  // spent most of the kernel's time in shuffle latency).
  constexpr int kParts = kThreads / kChunk, kPer = cols / kParts;
  static_assert(kParts == 4 && kPer * kParts == cols, "four threads a column");
  const int j = threadIdx.x / kParts, c0 = threadIdx.x % kParts * kPer;
  const int first = j / kSub * kSub;
  acc_t w[kPer], kj[kPer];
#pragma unroll
  for (int u = 0; u < kPer; ++u) {
    w[u] = 1;
    kj[u] = k[j * ld + c0 + u];
  }
  for (int i = first; i < first + kSub; ++i) {
    acc_t s = 0;
    if (i >= j) {
#pragma unroll
      for (int u = 0; u < kPer; ++u) {
        if (i > j) w[u] *= E[i * ld + c0 + u];
        s += q[i * ld + c0 + u] * kj[u] * w[u];
      }
    }
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    if (threadIdx.x % kParts == 0 && i >= j) A[i * lda + j] += s;
  }
  __syncthreads();
  int shift = 0;
  for (int a = 1; a < kSubs; ++a) {
    const int a0 = a * kSub;
    block_mma<Tr, lay::row, lay::col>(A + a0 * lda, lda, qs + a0 * ldo, ldo,
                                      ks + stack_row0(a) * ldo, ldo, kSub, a0, cols, true, shift);
    shift += mma_tiles<Tr>(kSub, a0);
  }
  __syncthreads();
}

}  // namespace glabench::chunked
