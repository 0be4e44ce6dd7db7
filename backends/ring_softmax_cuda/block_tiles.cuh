// The tile shape of the own blockwise kernels and the shared-memory loads they share.
// A block works on 16 rows of its own side (queries forward and for dq, keys for dk/dv)
// with 8 threads per row; the other side streams through in tiles of 32. Shared rows
// are padded by one value so that the 8 threads of a row group, reading 8 different
// rows at the same column, hit 8 different banks.
#pragma once

#include "block_types.cuh"

namespace glabench::ring {

constexpr int kOwnRows = 16;     // rows a block owns
constexpr int kStreamRows = 32;  // rows of the streamed side per tile
constexpr int kRowThreads = 8;   // threads per owned row
constexpr int kThreads = kOwnRows * kRowThreads;
constexpr int kMaxHead = 256;
constexpr int kPerThread = kMaxHead / kRowThreads;  // columns per thread, at most
constexpr int kStreamPerThread = kStreamRows / kRowThreads;

static_assert(kThreads == 128 && kRowThreads == 8, "the row-group reductions below use 3 shuffles");

// Rows [t0, t0 + rows) of head (b, h) of a [B,T,H,X] tensor into shared memory as A,
// row stride `ld`; rows at or past `t_end` become zeros.
template <typename A, typename T>
__device__ __forceinline__ void load_rows(A* dst, int ld, const T* __restrict__ src, int64_t b,
                                          int h, int64_t t0, int rows, int64_t t_end, int X,
                                          int64_t T_len, int H) {
  for (int i = threadIdx.x; i < rows * X; i += blockDim.x) {
    const int r = i / X, c = i % X;
    const int64_t t = t0 + r;
    dst[r * ld + c] = t < t_end ? load_as<A>(src + token_row(b, t, h, T_len, H) * X + c) : A(0);
  }
}

// Does query tq see key tk? Both in the owned row's sequence `seq` (sequence_of), and
// under a causal mask the key not after the query.
__device__ __forceinline__ bool sees(const pair_geometry& g, token_span seq, int64_t tq,
                                     int64_t tk) {
  return tq >= seq.begin && tq < seq.end && tk >= seq.begin && tk < seq.end &&
         (!g.causal || tk <= tq);
}

// The keys [k_begin, k_end) of the pair that the query rows [q0, min(q0 + 16, q_end)) may
// see: none after the last query under a causal mask, none outside the rows' sequences in
// a packed batch. Returns the sequence of the thread's row t.
__device__ __forceinline__ token_span visible_keys(const pair_geometry& g, int64_t q0,
                                                   int64_t q_end, int64_t t, int64_t* k_begin,
                                                   int64_t* k_end) {
  const int64_t last = (q0 + kOwnRows < q_end ? q0 + kOwnRows : q_end) - 1;
  *k_begin = g.kv_begin;
  *k_end = g.kv_begin + g.kv_len;
  if (g.causal && last + 1 < *k_end) *k_end = last + 1;
  if (g.cu_seqlens) {
    *k_begin = max(*k_begin, sequence_of(g, q0).begin);
    *k_end = min(*k_end, sequence_of(g, last).end);
  }
  return sequence_of(g, t);
}

// The queries [q_begin, q_end) of the pair that may see the key rows
// [k0, min(k0 + 16, kv_end)): none before the first key under a causal mask, none outside
// the rows' sequences in a packed batch. Returns the sequence of the thread's row t.
__device__ __forceinline__ token_span seeing_queries(const pair_geometry& g, int64_t k0,
                                                     int64_t kv_end, int64_t t, int64_t* q_begin,
                                                     int64_t* q_end) {
  const int64_t last = (k0 + kOwnRows < kv_end ? k0 + kOwnRows : kv_end) - 1;
  *q_begin = g.causal && k0 > g.q_begin ? k0 : g.q_begin;
  *q_end = g.q_begin + g.q_len;
  if (g.cu_seqlens) {
    *q_begin = max(*q_begin, sequence_of(g, k0).begin);
    *q_end = min(*q_end, sequence_of(g, last).end);
  }
  return sequence_of(g, t);
}

// Sum and max over the 8 threads of a row group (consecutive lanes).
template <typename A>
__device__ __forceinline__ A group_sum(A x) {
  for (int m = 1; m < kRowThreads; m <<= 1) x += __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}
template <typename A>
__device__ __forceinline__ A group_max(A x) {
  for (int m = 1; m < kRowThreads; m <<= 1) x = max(x, __shfl_xor_sync(0xffffffffu, x, m));
  return x;
}

// Dot product of shared rows a and b over n values.
template <typename A>
__device__ __forceinline__ A row_dot(const A* a, const A* b, int n) {
  A s = A(0);
  for (int i = 0; i < n; ++i) s = fma(a[i], b[i], s);
  return s;
}

}  // namespace glabench::ring
