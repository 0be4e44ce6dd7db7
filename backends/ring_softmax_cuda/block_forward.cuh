// The own blockwise attention kernel, forward: one (query chunk, key chunk) pair gives
// each query row out_b = softmax(scale·q kᵀ) v over the chunk's visible keys and
// lse_b = log Σ exp(scale·q k), by the online softmax (running max and sum, rescaled as
// tiles arrive), and folds (out_b, lse_b) into the row's running result with seed 003's
// merge (lse_merge.cuh) in the same kernel: the block's output never goes to memory.
// Plain FFMA in fp32 (no TF32) and DFMA in fp64.
#pragma once

#include "block_tiles.cuh"
#include "lse_merge.cuh"

namespace glabench::ring {

template <typename A>
__host__ __device__ constexpr size_t forward_smem_values(int D, int V) {
  return size_t(kOwnRows) * (D + 1) + size_t(kStreamRows) * (D + 1) + size_t(kStreamRows) * V +
         size_t(kOwnRows) * (kStreamRows + 1);
}

// grid (ceil(q_len / 16), B·H), 128 threads. acc_o [B,T,H,V] / acc_lse [B,H,T] hold the
// running result between pairs; the pair that is `last` for its query chunk writes o
// and lse instead.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    block_forward_kernel(pair_geometry g, visit when, acc_t<T> scale, const T* __restrict__ q,
                         const T* __restrict__ k, const T* __restrict__ v,
                         acc_t<T>* __restrict__ acc_o, acc_t<T>* __restrict__ acc_lse,
                         T* __restrict__ o, acc_t<T>* __restrict__ lse) {
  using A = acc_t<T>;
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  const int ldq = g.D + 1;
  A* qs = reinterpret_cast<A*>(smem_bytes);
  A* ks = qs + kOwnRows * ldq;
  A* vs = ks + kStreamRows * ldq;
  A* ps = vs + kStreamRows * g.V;

  const int b = blockIdx.y / g.H, h = blockIdx.y % g.H;
  const int r = threadIdx.x / kRowThreads, sub = threadIdx.x % kRowThreads;
  const int64_t q_end = g.q_begin + g.q_len;
  const int64_t q0 = g.q_begin + int64_t(blockIdx.x) * kOwnRows, tq = q0 + r;
  const bool row_valid = tq < q_end;
  load_rows(qs, ldq, q, b, h, q0, kOwnRows, q_end, g.D, g.T, g.H);

  int64_t k_begin, k_end;
  const token_span seq = visible_keys(g, q0, q_end, row_valid ? tq : q0, &k_begin, &k_end);

  A m = neg_inf<A>(), l = A(0);
  A acc[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) acc[j] = A(0);

  for (int64_t k0 = k_begin; k0 < k_end; k0 += kStreamRows) {
    __syncthreads();  // the previous tile's readers are done
    load_rows(ks, ldq, k, b, h, k0, kStreamRows, k_end, g.D, g.T, g.H);
    load_rows(vs, g.V, v, b, h, k0, kStreamRows, k_end, g.V, g.T, g.H);
    __syncthreads();

    A s[kStreamPerThread];
    A tile_max = neg_inf<A>();
#pragma unroll
    for (int j = 0; j < kStreamPerThread; ++j) {
      const int kk = sub + kRowThreads * j;
      const int64_t tk = k0 + kk;
      const bool visible = row_valid && tk < k_end && sees(g, seq, tq, tk);
      s[j] = visible ? scale * row_dot(qs + r * ldq, ks + kk * ldq, g.D) : neg_inf<A>();
      tile_max = max(tile_max, s[j]);
    }
    const A m_new = max(m, group_max(tile_max));
    // Nothing visible yet: keep m = −∞ and add nothing (exp(−∞ − −∞) would be NaN).
    const bool any = m_new != neg_inf<A>();
    const A correction = any ? exp_of(m - m_new) : A(1);
    A p_sum = A(0);
#pragma unroll
    for (int j = 0; j < kStreamPerThread; ++j) {
      const A p = any ? exp_of(s[j] - m_new) : A(0);
      ps[r * (kStreamRows + 1) + sub + kRowThreads * j] = p;
      p_sum += p;
    }
    l = l * correction + group_sum(p_sum);
    m = m_new;
    __syncwarp();  // the row's probabilities are in ps

#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int c = sub + kRowThreads * j;
      if (c < g.V) {
        A a = acc[j] * correction;
        for (int kk = 0; kk < kStreamRows; ++kk)
          a = fma(ps[r * (kStreamRows + 1) + kk], vs[kk * g.V + c], a);
        acc[j] = a;
      }
    }
  }

  // Epilogue: the block's (out_b, lse_b), merged into the row's running result.
  const A lse_b = l > A(0) ? m + log_of(l) : neg_inf<A>();
  const A inv_l = l > A(0) ? A(1) / l : A(0);
  const int64_t row = token_row(b, row_valid ? tq : q0, h, g.T, g.H);
  const int64_t lse_at = (int64_t(b) * g.H + h) * g.T + (row_valid ? tq : q0);
  A w = A(1), l_new = lse_b;
  if (row_valid && !when.first) w = merge_weight(acc_lse[lse_at], lse_b, &l_new);
  __syncwarp();  // the row's threads have read acc_lse before its first thread writes it
  if (!row_valid) return;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int c = sub + kRowThreads * j;
    if (c < g.V) fold_value(when, w, acc[j] * inv_l, acc_o + row * g.V + c, o + row * g.V + c);
  }
  if (sub == 0) (when.last ? lse : acc_lse)[lse_at] = l_new;
}

}  // namespace glabench::ring
