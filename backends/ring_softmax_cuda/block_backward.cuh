// The own blockwise attention kernels, backward, for one (query chunk, key chunk) pair.
// The forward's final lse makes each block's probabilities the true ones,
// P = exp(scale·q kᵀ − lse), so blocks need no merging: with D_i = do_i·o_i (the final o),
//   dv_j += Σ_i P_ij do_i,   dS_ij = P_ij (do_i·v_j − D_i),
//   dq_i += scale Σ_j dS_ij k_j,   dk_j += scale Σ_i dS_ij q_i.
// Two kernels, as in ring-flash-attention's backward: dq per query rows (keys streamed),
// dk and dv per key rows (queries streamed), so each output row has one writer and no
// atomics: sums are in a fixed order, deterministic. Accumulators live in fp32 (fp64).
#pragma once

#include "block_tiles.cuh"

namespace glabench::ring {

// D_i = Σ_c do_ic o_ic for the rows [begin, begin + len) of every head: one warp per
// (b, t, h).
template <typename T>
__global__ void row_dot_kernel(int B, int64_t T_len, int H, int V, int64_t begin, int64_t len,
                               const T* __restrict__ d_o, const T* __restrict__ o,
                               acc_t<T>* __restrict__ out /* [B,H,T] */) {
  using A = acc_t<T>;
  const int lane = threadIdx.x % 32;
  const int64_t rows = int64_t(B) * len * H;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    const int64_t h = r % H, bt = r / H, t = begin + bt % len, b = bt / len;
    const int64_t row = token_row(b, t, h, T_len, H);
    A s = A(0);
    for (int c = lane; c < V; c += 32)
      s = fma(load_as<A>(d_o + row * V + c), load_as<A>(o + row * V + c), s);
    for (int m = 16; m; m >>= 1) s += __shfl_xor_sync(0xffffffffu, s, m);
    if (lane == 0) out[(b * H + h) * T_len + t] = s;
  }
}

// Add this pair's share to a row's gradient accumulator: `first` sets it, `last` writes
// the final gradient in the storage dtype instead.
template <typename T>
__device__ __forceinline__ void fold_gradient(visit when, acc_t<T> share, acc_t<T>* acc, T* out) {
  const acc_t<T> total = when.first ? share : *acc + share;
  if (when.last)
    store_from(out, total);
  else
    *acc = total;
}

template <typename A>
__host__ __device__ constexpr size_t dq_smem_values(int D, int V) {
  return size_t(kOwnRows + kStreamRows) * (D + 1) + size_t(kOwnRows + kStreamRows) * (V + 1) +
         size_t(kOwnRows) * (kStreamRows + 1);
}

// dq for 16 query rows: grid (ceil(q_len / 16), B·H), 128 threads.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    block_dq_kernel(pair_geometry g, visit when, acc_t<T> scale, const T* __restrict__ q,
                    const T* __restrict__ k, const T* __restrict__ v, const T* __restrict__ d_o,
                    const acc_t<T>* __restrict__ lse, const acc_t<T>* __restrict__ row_dots,
                    acc_t<T>* __restrict__ acc_dq, T* __restrict__ dq) {
  using A = acc_t<T>;
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  const int ldk = g.D + 1, ldv = g.V + 1;
  A* qs = reinterpret_cast<A*>(smem_bytes);
  A* dos = qs + kOwnRows * ldk;
  A* ks = dos + kOwnRows * ldv;
  A* vs = ks + kStreamRows * ldk;
  A* dss = vs + kStreamRows * ldv;

  const int b = blockIdx.y / g.H, h = blockIdx.y % g.H;
  const int r = threadIdx.x / kRowThreads, sub = threadIdx.x % kRowThreads;
  const int64_t q_end = g.q_begin + g.q_len;
  const int64_t q0 = g.q_begin + int64_t(blockIdx.x) * kOwnRows, tq = q0 + r;
  const bool row_valid = tq < q_end;
  load_rows(qs, ldk, q, b, h, q0, kOwnRows, q_end, g.D, g.T, g.H);
  load_rows(dos, ldv, d_o, b, h, q0, kOwnRows, q_end, g.V, g.T, g.H);
  const int64_t stat_at = (int64_t(b) * g.H + h) * g.T + (row_valid ? tq : q0);
  const A lse_r = lse[stat_at], dot_r = row_dots[stat_at];

  int64_t k_begin, k_end;
  const token_span seq = visible_keys(g, q0, q_end, row_valid ? tq : q0, &k_begin, &k_end);
  A acc[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) acc[j] = A(0);

  for (int64_t k0 = k_begin; k0 < k_end; k0 += kStreamRows) {
    __syncthreads();
    load_rows(ks, ldk, k, b, h, k0, kStreamRows, k_end, g.D, g.T, g.H);
    load_rows(vs, ldv, v, b, h, k0, kStreamRows, k_end, g.V, g.T, g.H);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kStreamPerThread; ++j) {
      const int kk = sub + kRowThreads * j;
      const int64_t tk = k0 + kk;
      const bool visible = row_valid && tk < k_end && sees(g, seq, tq, tk);
      A ds = A(0);
      if (visible) {
        const A p = exp_of(scale * row_dot(qs + r * ldk, ks + kk * ldk, g.D) - lse_r);
        ds = p * (row_dot(dos + r * ldv, vs + kk * ldv, g.V) - dot_r);
      }
      dss[r * (kStreamRows + 1) + kk] = ds;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int d = sub + kRowThreads * j;
      if (d < g.D) {
        A a = acc[j];
        for (int kk = 0; kk < kStreamRows; ++kk)
          a = fma(dss[r * (kStreamRows + 1) + kk], ks[kk * ldk + d], a);
        acc[j] = a;
      }
    }
  }
  if (!row_valid) return;
  const int64_t row = token_row(b, tq, h, g.T, g.H);
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int d = sub + kRowThreads * j;
    if (d < g.D) fold_gradient<T>(when, scale * acc[j], acc_dq + row * g.D + d, dq + row * g.D + d);
  }
}

template <typename A>
__host__ __device__ constexpr size_t dkdv_smem_values(int D, int V) {
  return size_t(kOwnRows + kStreamRows) * (D + 1) + size_t(kOwnRows + kStreamRows) * (V + 1) +
         2 * size_t(kStreamRows) + 2 * size_t(kOwnRows) * (kStreamRows + 1);
}

// dk and dv for 16 key rows: grid (ceil(kv_len / 16), B·H), 128 threads.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    block_dkdv_kernel(pair_geometry g, visit when, acc_t<T> scale, const T* __restrict__ q,
                      const T* __restrict__ k, const T* __restrict__ v, const T* __restrict__ d_o,
                      const acc_t<T>* __restrict__ lse, const acc_t<T>* __restrict__ row_dots,
                      acc_t<T>* __restrict__ acc_dk, acc_t<T>* __restrict__ acc_dv,
                      T* __restrict__ dk, T* __restrict__ dv) {
  using A = acc_t<T>;
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  const int ldk = g.D + 1, ldv = g.V + 1, ldp = kStreamRows + 1;
  A* ks = reinterpret_cast<A*>(smem_bytes);
  A* vs = ks + kOwnRows * ldk;
  A* qs = vs + kOwnRows * ldv;
  A* dos = qs + kStreamRows * ldk;
  A* lse_s = dos + kStreamRows * ldv;
  A* dot_s = lse_s + kStreamRows;
  A* ps = dot_s + kStreamRows;
  A* dss = ps + kOwnRows * ldp;

  const int b = blockIdx.y / g.H, h = blockIdx.y % g.H;
  const int r = threadIdx.x / kRowThreads, sub = threadIdx.x % kRowThreads;
  const int64_t kv_end = g.kv_begin + g.kv_len;
  const int64_t k0 = g.kv_begin + int64_t(blockIdx.x) * kOwnRows, tk = k0 + r;
  const bool row_valid = tk < kv_end;
  load_rows(ks, ldk, k, b, h, k0, kOwnRows, kv_end, g.D, g.T, g.H);
  load_rows(vs, ldv, v, b, h, k0, kOwnRows, kv_end, g.V, g.T, g.H);

  int64_t q_start, q_end;
  const token_span seq = seeing_queries(g, k0, kv_end, row_valid ? tk : k0, &q_start, &q_end);
  A dk_acc[kPerThread], dv_acc[kPerThread];
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) dk_acc[j] = dv_acc[j] = A(0);

  for (int64_t t0 = q_start; t0 < q_end; t0 += kStreamRows) {
    __syncthreads();
    load_rows(qs, ldk, q, b, h, t0, kStreamRows, q_end, g.D, g.T, g.H);
    load_rows(dos, ldv, d_o, b, h, t0, kStreamRows, q_end, g.V, g.T, g.H);
    for (int i = threadIdx.x; i < kStreamRows; i += blockDim.x) {
      const int64_t at = (int64_t(b) * g.H + h) * g.T + t0 + i;
      lse_s[i] = t0 + i < q_end ? lse[at] : A(0);
      dot_s[i] = t0 + i < q_end ? row_dots[at] : A(0);
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kStreamPerThread; ++j) {
      const int qi = sub + kRowThreads * j;
      const int64_t tq = t0 + qi;
      const bool visible = row_valid && tq < q_end && sees(g, seq, tq, tk);
      A p = A(0), ds = A(0);
      if (visible) {
        p = exp_of(scale * row_dot(qs + qi * ldk, ks + r * ldk, g.D) - lse_s[qi]);
        ds = p * (row_dot(dos + qi * ldv, vs + r * ldv, g.V) - dot_s[qi]);
      }
      ps[r * ldp + qi] = p;
      dss[r * ldp + qi] = ds;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int c = sub + kRowThreads * j;
      if (c < g.V) {
        A a = dv_acc[j];
        for (int qi = 0; qi < kStreamRows; ++qi) a = fma(ps[r * ldp + qi], dos[qi * ldv + c], a);
        dv_acc[j] = a;
      }
      if (c < g.D) {
        A a = dk_acc[j];
        for (int qi = 0; qi < kStreamRows; ++qi) a = fma(dss[r * ldp + qi], qs[qi * ldk + c], a);
        dk_acc[j] = a;
      }
    }
  }
  if (!row_valid) return;
  const int64_t row = token_row(b, tk, h, g.T, g.H);
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int c = sub + kRowThreads * j;
    if (c < g.D)
      fold_gradient<T>(when, scale * dk_acc[j], acc_dk + row * g.D + c, dk + row * g.D + c);
    if (c < g.V) fold_gradient<T>(when, dv_acc[j], acc_dv + row * g.V + c, dv + row * g.V + c);
  }
}

// Per-pair gradients folded into the accumulators: rows [begin, begin + len) of a
// [B,T,H,X] tensor, one thread per value. The partial is cuDNN's block (storage dtype),
// or a travelling accumulator of the multi-GPU ring (T = acc_t); NULL adds nothing (with
// `when.last`: the accumulator written out).
template <typename T>
__global__ void fold_partial_kernel(int B, int64_t T_len, int H, int X, int64_t begin, int64_t len,
                                    visit when, const T* __restrict__ partial,
                                    acc_t<T>* __restrict__ acc, T* __restrict__ out) {
  using A = acc_t<T>;
  const int64_t n = int64_t(B) * len * H * X;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % X, r = i / X, h = r % H, bt = r / H;
    const int64_t at = token_row(bt / len, begin + bt % len, h, T_len, H) * X + c;
    fold_gradient<T>(when, partial ? load_as<A>(partial + at) : A(0), acc + at, out + at);
  }
}

// out = a + b, value by value over n values, summed in the compute type A: the ranks'
// whole-shard gradient sums (a and b in the storage or compute type, out in either; out
// may be a, so neither is __restrict__).
template <typename A, typename P, typename Q, typename O>
__global__ void sum_values_kernel(int64_t n, const P* a, const Q* __restrict__ b, O* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    store_from(out + i, A(load_as<A>(a + i) + load_as<A>(b + i)));
}

// cuDNN below 9.26 takes sdpa_backward's statistics only as a packed [B,H,S] tensor, so
// a chunk's rows of the final lse [B,H,T] are copied out before its blocks' backward.
static __global__ void pack_lse_rows_kernel(int B, int H, int64_t T_len, int64_t begin, int64_t len,
                                            const float* __restrict__ lse,
                                            float* __restrict__ packed) {
  const int64_t n = int64_t(B) * H * len;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    packed[i] = lse[(i / len) * T_len + begin + i % len];
}

}  // namespace glabench::ring
