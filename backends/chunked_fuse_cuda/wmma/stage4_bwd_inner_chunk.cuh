// The backward of stage 4: the intra-chunk parts of dq and dk, from dA = scale·do·vᵀ
// (C×C, lower triangle), relative to sub-chunk references as in the forward so every
// exponent is ≤ 0. Both leave out the diagonal pair (i = j): dg needs them without it
// (see ../backward_wmma.cuh), and the caller adds it back.
//
//   dq[i] += Σ_{j<i} dA[i][j] · k[j] ⊙ e^{G[i] − G[j]}
//     below-diagonal blocks: e^{G[i] − G[a0]} ⊙ (dA · k[j]e^{G[a0] − G[j]}), the keys of
//     stage 4 (reference: the first token a0 of i's sub-chunk);
//   dk[j] += Σ_{i>j} dA[i][j] · q[i] ⊙ e^{G[i] − G[j]}
//     below-diagonal blocks: e^{G[b1] − G[j]} ⊙ (dAᵀ · q[i]e^{G[i] − G[b1]}) (reference:
//     the last token b1 of j's sub-chunk);
//   diagonal blocks pair by pair, with running products of e^{g} as decays
//   (diagonal_column).
#pragma once

#include "stage4_fwd_inner_chunk.cuh"

namespace glabench::chunked {

// Queries after each sub-chunk b < kSubs−1, stacked: q[i]·e^{G[i] − G[b1]}, i > b1.
__host__ __device__ constexpr int after_row0(int b) {
  int r = 0;
  for (int x = 0; x < b; ++x) r += kChunk - kSub * (x + 1);
  return r;
}

template <class Tr>
__device__ void sub_chunk_queries_after(typename Tr::op_t* qe, int ldo, const typename Tr::acc_t* q,
                                        const typename Tr::gate_t* G, int ld, int cols) {
  using op_t = typename Tr::op_t;
  using acc_t = typename Tr::acc_t;
  for (int i = threadIdx.x; i < kStackRows * cols; i += kThreads) {
    const int row = i / cols, c = i % cols;
    int b = 0;  // row's sub-chunk: compared with constants, no loop
#pragma unroll
    for (int x = 1; x + 1 < kSubs; ++x) b += row >= after_row0(x);
    const int b1 = b * kSub + kSub - 1, t = b1 + 1 + row - after_row0(b);
    qe[row * ldo + c] =
        to_op<op_t>(q[t * ld + c] * Tr::exp(static_cast<acc_t>(G[t * ld + c] - G[b1 * ld + c])));
  }
}

// T[i] = dA_op[i][0:a0] · stack(a) for the rows i ≥ kSub (a: i's sub-chunk). Products
// only: barriers before and after are the caller's.
template <class Tr>
__device__ void inner_chunk_dq_products(typename Tr::acc_t* T, int ld, const typename Tr::op_t* dA,
                                        int lda, const typename Tr::op_t* ks, int ldo, int cols) {
  int shift = 0;
  for (int a = 1; a < kSubs; ++a) {
    const int a0 = a * kSub;
    block_mma<Tr, lay::row, lay::row>(T + a0 * ld, ld, dA + a0 * lda, lda, ks + stack_row0(a) * ldo,
                                      ldo, kSub, cols, a0, false, shift);
    shift += mma_tiles<Tr>(kSub, cols);
  }
}

// T[j] = Σ_{i>b1} dA_op[i][j] · qe(b)[i] for the rows j < kChunk−kSub (b: j's sub-chunk).
template <class Tr>
__device__ void inner_chunk_dk_products(typename Tr::acc_t* T, int ld, const typename Tr::op_t* dA,
                                        int lda, const typename Tr::op_t* qe, int ldo, int cols) {
  int shift = 0;
  for (int b = 0; b + 1 < kSubs; ++b) {
    const int b0 = b * kSub, after = kChunk - b0 - kSub;
    block_mma<Tr, lay::col, lay::row>(T + b0 * ld, ld, dA + (b0 + kSub) * lda + b0, lda,
                                      qe + after_row0(b) * ldo, ldo, kSub, cols, after, false,
                                      shift);
    shift += mma_tiles<Tr>(kSub, cols);
  }
}

// One column of one sub-chunk's diagonal block, its strict part, its decays running
// products of the tokens' own E = e^{g}, row u of the sub-chunk into out[u]:
//   dq  out[i] = Σ_{j<i} dA(i, j)·x(j)·e^{G[i] − G[j]}, x the keys' column;
//   dk  out[j] = Σ_{i>j} dA(i, j)·x(i)·e^{G[i] − G[j]}, x the queries' column.
// Rows are the sub-chunk's (0 … kSub−1); x and E, read once, stay in registers, so a term
// reads only dA(i, j), the same word for every column. Each output sums its terms in the
// order of a walk from its own row outwards.
template <bool kDk, class T, class DA, class X, class E>
__device__ __forceinline__ void diagonal_column(T (&out)[kSub], DA dA, X x, E e) {
  T xs[kSub], es[kSub];
#pragma unroll
  for (int u = 0; u < kSub; ++u) xs[u] = x(u), es[u] = e(u);
#pragma unroll
  for (int r = 0; r < kSub; ++r) {
    T s = 0, w = 1;
    if constexpr (kDk) {
#pragma unroll
      for (int u = r + 1; u < kSub; ++u) {
        w *= es[u];
        s += dA(u, r) * xs[u] * w;
      }
    } else {
#pragma unroll
      for (int u = r - 1; u >= 0; --u) {
        w *= es[u + 1];
        s += dA(r, u) * xs[u] * w;
      }
    }
    out[r] = s;
  }
}

// Every column and sub-chunk of the diagonal blocks (diagonal_column) into out (row-major,
// ld), a thread a (column, sub-chunk); x and E are kChunk×cols, dA kChunk×kChunk.
template <class Tr, bool kDk>
__device__ void diagonal_blocks(typename Tr::acc_t* out, const typename Tr::acc_t* dA, int lda,
                                const typename Tr::acc_t* x, const typename Tr::acc_t* E, int ld,
                                int cols) {
  using acc_t = typename Tr::acc_t;
  for (int task = threadIdx.x; task < kSubs * cols; task += kThreads) {
    const int c = task % cols, a0 = task / cols * kSub;
    acc_t sums[kSub];
    diagonal_column<kDk>(
        sums, [&](int i, int j) { return dA[(a0 + i) * lda + a0 + j]; },
        [&](int u) { return x[(a0 + u) * ld + c]; }, [&](int u) { return E[(a0 + u) * ld + c]; });
#pragma unroll
    for (int r = 0; r < kSub; ++r) out[(a0 + r) * ld + c] = sums[r];
  }
}

// dg of a chunk's COLS key features by the whole block: dg_r = Σ_{s≥r} T_s + Σ_{s<r} P_s
// + later(c), with T_s = q_s ⊙ dq_s − k_s ⊙ dk_intra_s and P_s = k_s ⊙ dk_inter_s (the sums
// without cancellation: ../backward_wmma.cuh's header). A thread a (column, segment of
// kChunk·COLS/kThreads rows): its rows' T and P in registers, the segments' totals through
// `scratch` (2·kThreads elements), then its rows' sums. T(r, c) and P(r, c) read;
// out(r, c, x) may write over T (a thread writes only its own rows, after reading them).
// Barriers inside; the caller's before (T, P written) and after (out read).
template <int COLS, class A, class TA, class PA, class Out, class Later>
__device__ __forceinline__ void dg_sums(TA T, PA P, Out out, Later later, A* scratch) {
  constexpr int kSegs = kThreads / COLS, kLen = kChunk / kSegs;
  static_assert(kSegs * COLS == kThreads && kLen * kSegs == kChunk, "segments tile the chunk");
  const int c = threadIdx.x % COLS, seg = threadIdx.x / COLS, r0 = seg * kLen;
  A t[kLen], p[kLen], t_sum = 0, p_sum = 0;
#pragma unroll
  for (int i = 0; i < kLen; ++i) {
    t[i] = T(r0 + i, c), p[i] = P(r0 + i, c);
    t_sum += t[i], p_sum += p[i];
  }
  scratch[seg * COLS + c] = t_sum;
  scratch[(kSegs + seg) * COLS + c] = p_sum;
  __syncthreads();
  A after = later(c), before = 0;  // T of the later segments, P of the earlier ones
  for (int s = kSegs - 1; s > seg; --s) after += scratch[s * COLS + c];
  for (int s = 0; s < seg; ++s) before += scratch[(kSegs + s) * COLS + c];
#pragma unroll
  for (int i = kLen - 1; i >= 0; --i) t[i] = after += t[i];  // suffix sums, later included
#pragma unroll
  for (int i = 0; i < kLen; ++i) {
    out(r0 + i, c, t[i] + before);
    before += p[i];
  }
}

}  // namespace glabench::chunked
