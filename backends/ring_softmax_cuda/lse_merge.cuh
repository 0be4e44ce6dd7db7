// Seed 003's merge of blockwise attention results through their log-sum-exp.
//
// A block b over some keys gives out_b = Σ p_j v_j / Z_b and lse_b = log Z_b. Two blocks'
// union has Z = Z_a + Z_b, so out = (Z_a out_a + Z_b out_b) / Z, i.e.
//   out = out_a − σ(lse_b − lse_a)·(out_a − out_b),      σ(x) = 1 / (1 + e^{−x})
//   lse = lse_a − log σ(lse_a − lse_b)                    (= log(Z_a + Z_b))
// σ and log σ are evaluated so that nothing overflows: σ(x) = 1/(1+e^{−x}) is 0 or 1 at
// the extremes, and log σ(x) = min(x, 0) − log1p(e^{−|x|}) never forms log(1 + e^{x}).
// A row that has seen no key yet has lse = −∞ and takes the block as it is; a block
// whose rows see no key (lse_b = −∞) changes nothing. Both stay exact.
#pragma once

#include "block_types.cuh"

namespace glabench::ring {

__device__ __forceinline__ float sigmoid_of(float x) {
  return 1.f / (1.f + __expf(-x));
}
__device__ __forceinline__ double sigmoid_of(double x) {
  return 1.0 / (1.0 + exp(-x));
}
__device__ __forceinline__ float log_sigmoid_of(float x) {
  return fminf(x, 0.f) - log1pf(__expf(-fabsf(x)));
}
__device__ __forceinline__ double log_sigmoid_of(double x) {
  return fmin(x, 0.0) - log1p(exp(-fabs(x)));
}

// The weight the block gets, σ(lse_b − lse_a), and the merged lse. `lse_a` = −∞: the
// block alone (weight 1).
template <typename A>
__device__ __forceinline__ A merge_weight(A lse_a, A lse_b, A* lse_out) {
  if (lse_b == neg_inf<A>()) {
    *lse_out = lse_a;
    return A(0);
  }
  if (lse_a == neg_inf<A>()) {
    *lse_out = lse_b;
    return A(1);
  }
  *lse_out = lse_a - log_sigmoid_of(lse_a - lse_b);
  return sigmoid_of(lse_b - lse_a);
}

// out ← out − w·(out − out_b): one row's values after merge_weight gave w.
template <typename A>
__device__ __forceinline__ A merge_value(A out_a, A out_b, A w) {
  return out_a - w * (out_a - out_b);
}

// One value of a row: the block's ob folded into the row's running result with the
// weight w (the row's first block is taken as it is), kept in the accumulator, or by the
// row's last block written to the output in the storage dtype.
template <typename T, typename A>
__device__ __forceinline__ void fold_value(visit when, A w, A ob, A* acc, T* out) {
  const A merged = when.first ? ob : merge_value(*acc, ob, w);
  if (when.last)
    store_from(out, merged);
  else
    *acc = merged;
}

// The standalone merge, for blocks computed by cuDNN (out_b in the storage dtype, lse_b
// in fp32): one warp per query row, so the row's weight is computed once and its lse is
// read before it is overwritten. Folds block (out_b, lse_b) of query rows
// [q_begin, q_begin + q_len) into the running result: lse in acc_lse [B,H,T], the values
// read from `running` [B,T,H,V] (acc_o, or o itself where o holds the running result in
// the storage dtype: R = T) and kept in acc_o; `first` takes the block as it is, `last`
// writes the final o and lse instead.
template <typename T, typename A, typename R>
__global__ void merge_block_kernel(pair_geometry g, visit when, const T* __restrict__ out_b,
                                   const float* __restrict__ lse_b, const R* running,
                                   A* __restrict__ acc_o, A* __restrict__ acc_lse, T* o,
                                   A* __restrict__ lse) {
  const int lane = threadIdx.x % 32;
  const int64_t rows = int64_t(g.B) * g.q_len * g.H;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    const int h = int(r % g.H);
    const int64_t bt = r / g.H;
    const int64_t t = g.q_begin + bt % g.q_len, b = bt / g.q_len;
    const int64_t row = token_row(b, t, h, g.T, g.H);
    const int64_t lse_at = (b * g.H + h) * g.T + t;
    const A lb = A(lse_b[lse_at]);
    A w = A(1), l_new = lb;
    if (!when.first) w = merge_weight(acc_lse[lse_at], lb, &l_new);
    __syncwarp();  // every lane has read acc_lse before lane 0 may write it
    for (int c = lane; c < g.V; c += 32) {
      const int64_t at = row * g.V + c;
      const A ob = load_as<A>(out_b + at);
      const A merged = when.first ? ob : merge_value(load_as<A>(running + at), ob, w);
      if (when.last)
        store_from(o + at, merged);
      else
        acc_o[at] = merged;
    }
    if (lane == 0) (when.last ? lse : acc_lse)[lse_at] = l_new;
  }
}

}  // namespace glabench::ring
