// rwkv6 as gla with shifted queries (rwkv6_as_gla.hpp): the shift (or, beside the bf16
// forward walk, the first rows of o) before the gla call, and the terms after it, a launch
// each.
// Memory-bound kernels: a warp per (token row, head), four rows a warp, eight warps a block
// on one head; a sequence's first token a block of its own, past the row blocks (beside the
// walk, those blocks alone).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../common/workspace_carver.hpp"
#include "rwkv6_as_gla.hpp"

namespace glabench::chunked::rwkv6 {
namespace {

using cuda_plugin::carver;

constexpr int kWarps = 8, kThreads = kWarps * 32, kRowsPerWarp = 4;
constexpr int kRowsPerBlock = kWarps * kRowsPerWarp;
constexpr int kMaxPerLane = 256 / 32;  // K, V ≤ 256

size_t rows_of(const call& c) {
  return static_cast<size_t>(c.B) * static_cast<size_t>(c.T);
}
unsigned row_blocks(size_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

// ---- conversions --------------------------------------------------------------------
template <class S>
using acc_of = std::conditional_t<std::is_same_v<S, double>, double, float>;

template <class A, class X>
__device__ __forceinline__ A to(X x) {
  if constexpr (std::is_same_v<X, __nv_bfloat16>)
    return static_cast<A>(__bfloat162float(x));
  else if constexpr (std::is_same_v<X, __half>)
    return static_cast<A>(__half2float(x));
  else
    return static_cast<A>(x);
}
template <class X, class A>
__device__ __forceinline__ X from(A a) {
  if constexpr (std::is_same_v<X, __nv_bfloat16>)
    return __float2bfloat16_rn(static_cast<float>(a));
  else if constexpr (std::is_same_v<X, __half>)
    return __float2half_rn(static_cast<float>(a));
  else
    return static_cast<X>(a);
}

template <class A>
__device__ __forceinline__ A warp_sum(A x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}
// The sum of one value a thread over a block of kThreads, warp by warp in order.
template <class A>
__device__ __forceinline__ A block_sum(A x) {
  __shared__ A warps[kWarps];
  x = warp_sum(x);
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = x;
  __syncthreads();
  A sum = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) sum += warps[w];
  return sum;
}

// ---- where a row's sequence starts and ends -------------------------------------------
struct seq_index {
  const void* cu;
  bool wide;
  int64_t count, T;  // T: tokens a sequence when cu is null
};
struct span {
  int64_t n, first, last;
};
__device__ __forceinline__ int64_t offset_at(const seq_index& s, int64_t i) {
  return s.wide ? static_cast<const int64_t*>(s.cu)[i] : static_cast<const int32_t*>(s.cu)[i];
}
__device__ __forceinline__ span span_of(const seq_index& s, int64_t row) {
  if (!s.cu) {
    const int64_t n = row / s.T;
    return {n, n * s.T, n * s.T + s.T - 1};
  }
  int64_t lo = 0, hi = s.count - 1;  // the last n with cu[n] ≤ row
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (offset_at(s, mid) <= row)
      lo = mid;
    else
      hi = mid - 1;
  }
  return {lo, offset_at(s, lo), offset_at(s, lo + 1) - 1};
}

seq_index index_of(const call& c, const sequences& seqs) {
  return {seqs.cu_seqlens, seqs.wide, seqs.count, c.T};
}
__device__ __forceinline__ int64_t first_row(const seq_index& s, int64_t n) {
  return s.cu ? offset_at(s, n) : n * s.T;
}

// ---- the shift ----------------------------------------------------------------------
// out row t = in row t + 1, zero at a sequence's last token; `units` of U a row. One launch
// shifts one tensor or two (the backward's q and do): tensor blockIdx.y. Its first block
// also zeroes `zeros` counters at `zero` (the backward's du_counters).
template <class U>
struct shift_tensor {
  const U* in;
  U* out;
  int64_t units;
};
template <class U>
__global__ void shift_kernel(shift_tensor<U> x0, shift_tensor<U> x1, int64_t rows, seq_index s,
                             unsigned* zero, int zeros) {
  if (blockIdx.x == 0 && blockIdx.y == 0)
    for (int i = threadIdx.x; i < zeros; i += blockDim.x) zero[i] = 0u;
  const shift_tensor<U> x = blockIdx.y == 0 ? x0 : x1;
  // A warp a row: lane l takes units l, l + 32, …, kPer of them in flight at once.
  constexpr int kPer = 8;
  const int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  for (int64_t row = int64_t(blockIdx.x) * warps + (threadIdx.x >> 5); row < rows;
       row += int64_t(gridDim.x) * warps) {
    const bool last = span_of(s, row).last == row;
    const U* in = x.in + (row + 1) * x.units;
    U* out = x.out + row * x.units;
    for (int64_t u0 = lane; u0 < x.units; u0 += 32 * kPer) {
      U v[kPer];
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const int64_t u = u0 + 32 * j;
        v[j] = !last && u < x.units ? in[u] : U{};
      }
#pragma unroll
      for (int j = 0; j < kPer; ++j)
        if (u0 + 32 * j < x.units) out[u0 + 32 * j] = v[j];
    }
  }
}

// A tensor to shift: its rows of `row_bytes` bytes.
struct shift_rows_of {
  const void* in;
  void* out;
  size_t row_bytes;
};
template <class U>
cudaError_t shift_as(const shift_rows_of (&x)[2], int tensors, int64_t rows, seq_index s,
                     unsigned* zero, int zeros, cudaStream_t stream) {
  shift_tensor<U> t[2]{};
  for (int i = 0; i < tensors; ++i)
    t[i] = {static_cast<const U*>(x[i].in), static_cast<U*>(x[i].out),
            static_cast<int64_t>(x[i].row_bytes / sizeof(U))};
  const unsigned blocks = static_cast<unsigned>(
      std::min<int64_t>((rows + kWarps - 1) / kWarps, 1 << 20));  // a warp a row
  shift_kernel<U><<<dim3(blocks, static_cast<unsigned>(tensors)), kThreads, 0, stream>>>(
      t[0], t[1], rows, s, zero, zeros);
  return cudaGetLastError();
}
// The first `tensors` (1 or 2) of x shifted, in units every row and pointer is aligned to.
cudaError_t shift_rows(const shift_rows_of (&x)[2], int tensors, int64_t rows, seq_index s,
                       unsigned* zero, int zeros, cudaStream_t stream) {
  auto fits = [&](size_t a) {
    bool ok = true;
    for (int i = 0; i < tensors; ++i)
      ok = ok && x[i].row_bytes % a == 0 && reinterpret_cast<uintptr_t>(x[i].in) % a == 0 &&
           reinterpret_cast<uintptr_t>(x[i].out) % a == 0;
    return ok;
  };
  if (fits(16)) return shift_as<uint4>(x, tensors, rows, s, zero, zeros, stream);
  if (fits(8)) return shift_as<uint2>(x, tensors, rows, s, zero, zeros, stream);
  if (fits(4)) return shift_as<uint32_t>(x, tensors, rows, s, zero, zeros, stream);
  return shift_as<uint16_t>(x, tensors, rows, s, zero, zeros, stream);  // 16-bit storage
}

// ---- the terms ----------------------------------------------------------------------
template <class S, class St>
struct terms_args {
  const S* __restrict__ r, * __restrict__ k, * __restrict__ v, * __restrict__ u, * __restrict__ d_o;
  const St* __restrict__ h0;
  int64_t rows;
  int H, K, V;
  double scale;
  seq_index seqs;
};

// A warp's row of a head: lane l holds elements l, l + 32, … (K, V ≤ 256), loaded all at
// once so that the loads are in flight together.
template <class A, class X, int N>
__device__ __forceinline__ void load_row(const X* __restrict__ p, int n, int lane, A (&x)[N]) {
#pragma unroll
  for (int m = 0; m < N; ++m) {
    const int i = lane + 32 * m;
    x[m] = i < n ? to<A>(p[i]) : A(0);
  }
}
template <class X, class A, int N>
__device__ __forceinline__ void store_row(X* __restrict__ p, int n, int lane, const A (&x)[N]) {
#pragma unroll
  for (int m = 0; m < N; ++m)
    if (lane + 32 * m < n) p[lane + 32 * m] = from<X>(x[m]);
}
// Σ_i r_i u_i k_i over the warp's row.
template <class A, int N>
__device__ __forceinline__ A bonus_of(const A (&r)[N], const A (&u)[N], const A (&k)[N]) {
  A b = 0;
#pragma unroll
  for (int m = 0; m < N; ++m) b += r[m] * u[m] * k[m];
  return warp_sum(b);
}

// f(rh, first) for each of the warp's kRowsPerWarp rows of head blockIdx.y: rh = row·H + h
// (the row's K- and V-wide offsets are rh·K and rh·V), first whether it starts its sequence.
template <class S, class St, class F>
__device__ __forceinline__ void for_warp_rows(const terms_args<S, St>& a, F f) {
  const int h = blockIdx.y;
  const int64_t row0 = int64_t(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5) * kRowsPerWarp;
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int64_t row = row0 + rr;
    if (row >= a.rows) break;
    f(row * a.H + h, span_of(a.seqs, row).first == row);
  }
}

// Sequence n's first token, a block on head blockIdx.y: o = scale·r (h0 + diag(u) kᵀ v)
// (without h0, its bonus alone), columns over the threads.
template <class S, class St>
__device__ __forceinline__ void first_token_forward(const terms_args<S, St>& a, int64_t n,
                                                    S* __restrict__ o) {
  using A = acc_of<S>;
  __shared__ A r_s[256];
  __shared__ A part_s[kWarps][256];  // each warp's rows of h0, summed per column
  const int h = blockIdx.y, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row = first_row(a.seqs, n);
  const int64_t tk = (row * a.H + h) * a.K, tv = (row * a.H + h) * a.V;
  A part = 0;
  for (int i = threadIdx.x; i < a.K; i += blockDim.x) {
    r_s[i] = to<A>(a.r[tk + i]);
    part += r_s[i] * to<A>(a.u[int64_t(h) * a.K + i]) * to<A>(a.k[tk + i]);
  }
  const A bonus = block_sum(part);  // its barrier also publishes r_s
  // r·h0: warp w sums rows w, w + kWarps, … for the lane's columns, all of a row's loads in
  // flight at once (a thread looping over every row took 16 µs at the seed's shape); the
  // warps' sums meet in shared memory.
  const St* h0 = a.h0 ? a.h0 + (n * a.H + h) * int64_t(a.K) * a.V : nullptr;
  A acc[kMaxPerLane] = {};
  if (h0)
    for (int i = warp; i < a.K; i += kWarps) {
      const A ri = r_s[i];
#pragma unroll
      for (int m = 0; m < kMaxPerLane; ++m)
        if (lane + 32 * m < a.V) acc[m] += ri * to<A>(h0[int64_t(i) * a.V + lane + 32 * m]);
    }
#pragma unroll
  for (int m = 0; m < kMaxPerLane; ++m)
    if (lane + 32 * m < a.V) part_s[warp][lane + 32 * m] = acc[m];
  __syncthreads();
  for (int j = threadIdx.x; j < a.V; j += blockDim.x) {
    A sum = bonus * to<A>(a.v[tv + j]);
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += part_s[w][j];
    o[tv + j] = from<S>(static_cast<A>(a.scale) * sum);
  }
}
// o_t = o'_{t−1} + scale·(r_t·(u ⊙ k_t)) v_t, grid (row blocks + sequences, H): the blocks
// past `row_blocks` each a sequence's first token (first_token_forward).
template <class S, class St, int N>
__global__ void __launch_bounds__(kThreads)
    forward_terms_kernel(terms_args<S, St> a, const S* __restrict__ o_prev, S* __restrict__ o,
                         unsigned row_blocks) {
  if (blockIdx.x >= row_blocks) {
    first_token_forward(a, blockIdx.x - row_blocks, o);
    return;
  }
  using A = acc_of<S>;
  const int lane = threadIdx.x & 31;
  A u[N];
  load_row(a.u + int64_t(blockIdx.y) * a.K, a.K, lane, u);
  const A scale = static_cast<A>(a.scale);
  for_warp_rows(a, [&](int64_t rh, bool first) {
    if (first) return;
    const int64_t tk = rh * a.K, tv = rh * a.V;
    A r[N], k[N], v[N], prev[N];
    load_row(a.r + tk, a.K, lane, r);
    load_row(a.k + tk, a.K, lane, k);
    load_row(a.v + tv, a.V, lane, v);
    load_row(o_prev + tv - int64_t(a.H) * a.V, a.V, lane, prev);
    const A bonus = scale * bonus_of(r, u, k);
#pragma unroll
    for (int m = 0; m < N; ++m) prev[m] += bonus * v[m];
    store_row(o + tv, a.V, lane, prev);
  });
}

// Beside the bf16 walk that takes the bonus (launch.hpp's call::u): each sequence's first
// row of o, a block each (the walk writes the other rows).
template <class St>
__global__ void __launch_bounds__(kThreads)
    first_rows_kernel(terms_args<__nv_bfloat16, St> a, __nv_bfloat16* __restrict__ o) {
  first_token_forward(a, blockIdx.x, o);
}

// A sequence's first token with h0, for sequence n, rows 8z … 8z + 7 of h0 (a warp each,
// row i): dr_i = scale·h0_i·do plus the bonus's share, and dh0_i += scale·r_i do. (A block
// per (sequence, head) looping over the rows took 45 µs at the seed's shape.)
template <class S, class St>
__device__ __forceinline__ void first_token_backward(const terms_args<S, St>& a, int64_t n, int z,
                                                     S* __restrict__ dr, St* __restrict__ dh0) {
  using A = acc_of<S>;
  __shared__ A do_s[256];
  const int h = blockIdx.y, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row = first_row(a.seqs, n);
  const int64_t tk = (row * a.H + h) * a.K, tv = (row * a.H + h) * a.V;
  const A scale = static_cast<A>(a.scale);
  A part = 0;
  for (int j = threadIdx.x; j < a.V; j += blockDim.x) {
    do_s[j] = to<A>(a.d_o[tv + j]);
    part += do_s[j] * to<A>(a.v[tv + j]);
  }
  const A vdo = scale * block_sum(part);  // its barrier also publishes do_s
  const int i = z * kWarps + warp;
  if (i >= a.K) return;
  const int64_t at = ((n * a.H + h) * a.K + i) * a.V;  // row i of the state
  A acc = 0;
  for (int j = lane; j < a.V; j += 32) acc += to<A>(a.h0[at + j]) * do_s[j];
  acc = scale * warp_sum(acc);
  if (lane == 0)
    dr[tk + i] = from<S>(acc + vdo * to<A>(a.u[int64_t(h) * a.K + i]) * to<A>(a.k[tk + i]));
  if (!dh0) return;
  const A sr = scale * to<A>(a.r[tk + i]);
  for (int j = lane; j < a.V; j += 32) dh0[at + j] = from<St>(to<A>(dh0[at + j]) + sr * do_s[j]);
}

// du[h][i] = Σ over the row blocks of partials, for head blockIdx.y: warp w sums the blocks
// w, w + kWarps, … for the lane's N features, all of them at once (16 loads a thread in
// flight, 8 in fp64: more spill at 64 registers), then the warps in order through `sums`
// (the caller's shared memory). The same order every call. The partials come from other
// blocks: read through L2.
template <class S, int N>
__device__ __forceinline__ void sum_du(const acc_of<S>* partials, int64_t blocks, int H, int K,
                                       acc_of<S> (&sums)[kWarps][256], S* __restrict__ du) {
  using A = acc_of<S>;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, h = blockIdx.y;
  constexpr int kInFlight = (sizeof(A) == 8 ? 8 : 16) / N;  // blocks, added in order
  A sum[N] = {};
  for (int64_t b0 = warp; b0 < blocks; b0 += kInFlight * kWarps) {
    A x[kInFlight][N];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j)
#pragma unroll
      for (int m = 0; m < N; ++m) {
        const int64_t b = b0 + j * kWarps;
        const int i = lane + 32 * m;
        x[j][m] = b < blocks && i < K ? __ldcg(partials + (b * H + h) * K + i) : A(0);
      }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j)
#pragma unroll
      for (int m = 0; m < N; ++m) sum[m] += x[j][m];
  }
#pragma unroll
  for (int m = 0; m < N; ++m)
    if (lane + 32 * m < K) sums[warp][lane + 32 * m] = sum[m];
  __syncthreads();
  for (int i = threadIdx.x; i < K; i += blockDim.x) {
    A total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += sums[w][i];
    du[int64_t(h) * K + i] = from<S>(total);
  }
}

// What the backward's terms write, and du's bookkeeping.
template <class S, class St>
struct terms_out {
  const S* __restrict__ dq_prev;  // the gla call's dq': row t − 1 of it enters dr_t
  S* __restrict__ dr, * __restrict__ dk, * __restrict__ dv, * __restrict__ du;
  St* __restrict__ dh0;
  acc_of<S>* __restrict__ partials;   // [row blocks][H][K]
  unsigned* __restrict__ counters;    // [H], zero before the launch
  unsigned row_blocks, first_groups;  // first_groups: kWarps-row groups of h0 (0: no h0)
};

// The backward's terms in one launch, grid (row blocks + sequences·first_groups, H):
//  - a row block: dr (but a sequence's first token's with h0), the bonus's dk and dv, and
//    its share of du in `partials`; the head's last row block to finish (counters) sums du;
//  - past them, a sequence's first token with h0 (first_token_backward).
template <class S, class St, int N>
__global__ void __launch_bounds__(kThreads, N == 4 ? 4 : 1)
    backward_terms_kernel(terms_args<S, St> a, terms_out<S, St> out) {
  using A = acc_of<S>;
  if (blockIdx.x >= out.row_blocks) {
    const unsigned j = blockIdx.x - out.row_blocks;
    first_token_backward(a, j / out.first_groups, static_cast<int>(j % out.first_groups), out.dr,
                         out.dh0);
    return;
  }
  __shared__ A du_warps[kWarps][256];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, h = blockIdx.y;
  A u[N], du[N] = {};
  load_row(a.u + int64_t(h) * a.K, a.K, lane, u);
  const A scale = static_cast<A>(a.scale);
  for_warp_rows(a, [&](int64_t rh, bool first) {
    const int64_t tk = rh * a.K, tv = rh * a.V;
    A r[N], k[N], v[N], d_o[N];
    A g_k[N], g_v[N], prev[N] = {};
    load_row(a.r + tk, a.K, lane, r);
    load_row(a.k + tk, a.K, lane, k);
    load_row(a.v + tv, a.V, lane, v);
    load_row(a.d_o + tv, a.V, lane, d_o);
    load_row(out.dk + tk, a.K, lane, g_k);
    load_row(out.dv + tv, a.V, lane, g_v);
    if (!first) load_row(out.dq_prev + tk - int64_t(a.H) * a.K, a.K, lane, prev);
    const A bonus = scale * bonus_of(r, u, k);
    A vdo = 0;
#pragma unroll
    for (int m = 0; m < N; ++m) vdo += v[m] * d_o[m];
    vdo = scale * warp_sum(vdo);
#pragma unroll
    for (int m = 0; m < N; ++m) {
      prev[m] += vdo * u[m] * k[m];
      g_k[m] += vdo * u[m] * r[m];
      g_v[m] += bonus * d_o[m];
      du[m] += vdo * r[m] * k[m];
    }
    if (!first || !a.h0) store_row(out.dr + tk, a.K, lane, prev);
    store_row(out.dk + tk, a.K, lane, g_k);
    store_row(out.dv + tv, a.V, lane, g_v);
  });
#pragma unroll
  for (int m = 0; m < N; ++m)
    if (lane + 32 * m < a.K) du_warps[warp][lane + 32 * m] = du[m];
  __syncthreads();
  for (int i = threadIdx.x; i < a.K; i += blockDim.x) {
    A sum = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += du_warps[w][i];
    out.partials[(int64_t(blockIdx.x) * a.H + h) * a.K + i] = sum;
  }
  // The last row block of the head to get here sums du: every other block's partials are
  // written and fenced before its count.
  __shared__ unsigned arrived;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) arrived = atomicAdd(out.counters + h, 1u);
  __syncthreads();
  if (arrived != out.row_blocks - 1) return;
  __threadfence();
  sum_du<S, N>(out.partials, out.row_blocks, a.H, a.K, du_warps, out.du);
}

template <class F>
cudaError_t with_types(storage dtype, bool state_fp32, F f) {
  switch (dtype) {
    case storage::fp64:
      return f(double{}, double{});
    case storage::fp32:
      return f(float{}, float{});
    case storage::bf16:
      return state_fp32 ? f(__nv_bfloat16{}, float{}) : f(__nv_bfloat16{}, __nv_bfloat16{});
    default:
      return state_fp32 ? f(__half{}, float{}) : f(__half{}, __half{});
  }
}

template <class S, class St>
terms_args<S, St> terms_of(const call& c, const sequences& seqs, const void* u) {
  terms_args<S, St> a{};
  a.r = static_cast<const S*>(c.q), a.k = static_cast<const S*>(c.k);
  a.v = static_cast<const S*>(c.v), a.u = static_cast<const S*>(u);
  a.d_o = static_cast<const S*>(c.d_o), a.h0 = static_cast<const St*>(c.h0);
  a.rows = static_cast<int64_t>(rows_of(c));
  a.H = c.H, a.K = c.K, a.V = c.V;
  a.scale = c.scale;
  a.seqs = index_of(c, seqs);
  return a;
}

// The carving of workspace_bytes and plan, in one place (the forward's q' and o' unused on the
// walk that takes the bonus: workspace_bytes cannot know whether u is aligned for it).
struct carving {
  void *q, *o_or_do, *dq, *partials, *counters, *rest;  // rest: the gla call's workspace
  size_t used;                                          // bytes before it
};
carving carve(const call& c, bool backward, char* base) {
  carver w{base};
  const size_t rows = rows_of(c), elem = storage_bytes(c.dtype);
  carving k{};
  const size_t q_bytes = rows * c.H * c.K * elem;
  k.q = w.take<char>(q_bytes);
  k.o_or_do = w.take<char>(rows * c.H * c.V * elem);
  if (backward) {
    k.dq = w.take<char>(rows * c.H * c.K * elem);
    k.partials = w.take<char>(row_blocks(rows) * size_t(c.H) * c.K * acc_bytes(c.dtype));
    k.counters = w.take<unsigned>(size_t(c.H));
  }
  k.used = w.used;
  k.rest = base ? base + w.used : nullptr;
  return k;
}

// f(std::integral_constant<int, N>), N a lane's elements of a row in the terms kernels: 4
// where K and V ≤ 128 (half the registers: twice the blocks an SM), else kMaxPerLane.
template <class F>
void per_lane(const call& c, F f) {
  if (std::max(c.K, c.V) <= 128)
    f(std::integral_constant<int, 4>{});
  else
    f(std::integral_constant<int, kMaxPerLane>{});
}

// Sequences in a call: B, or a packed batch's N.
unsigned sequence_count(const call& c, const sequences& seqs) {
  return static_cast<unsigned>(seqs.cu_seqlens ? seqs.count : c.B);
}

}  // namespace

size_t workspace_bytes(const call& c, bool backward, size_t gla_bytes) {
  return carve(c, backward, nullptr).used + gla_bytes;
}

shifted plan(const call& c, bool backward, bool packed, const void* u) {
  const carving k = carve(c, backward, static_cast<char*>(c.workspace));
  shifted s{};
  s.gla = c;
  s.gla.workspace = k.rest;
  if (!backward) {
    // The walk reads u two elements at a time.
    s.on_walk = !packed && reinterpret_cast<uintptr_t>(u) % 4 == 0 && forward_takes_bonus(c);
    if (s.on_walk) {  // r and o as they are
      s.gla.u = u;
      return s;
    }
    s.gla.q = k.q;
    s.gla.o = k.o_or_do;
    s.o_prev = k.o_or_do;
  } else {
    s.gla.q = k.q;
    s.gla.o = nullptr;
    s.gla.d_o = k.o_or_do;
    s.gla.dq = k.dq;
    s.o_prev = k.dq;
    s.partials = k.partials;
    s.counters = static_cast<unsigned*>(k.counters);
  }
  return s;
}

cudaError_t launch_before(const call& c, const shifted& s, const sequences& seqs, const void* u,
                          bool backward) {
  const seq_index idx = index_of(c, seqs);
  const int64_t rows = static_cast<int64_t>(rows_of(c));
  if (s.on_walk) {
    const dim3 grid(sequence_count(c, seqs), static_cast<unsigned>(c.H));
    return with_types(c.dtype, c.state_fp32, [&](auto x, auto st) {
      using S = decltype(x);
      using St = decltype(st);
      if constexpr (std::is_same_v<S, __nv_bfloat16>) {
        first_rows_kernel<St>
            <<<grid, kThreads, 0, c.stream>>>(terms_of<S, St>(c, seqs, u), static_cast<S*>(c.o));
        return cudaGetLastError();
      }
      return cudaErrorInvalidValue;  // forward_takes_bonus: bf16 only
    });
  }
  const size_t elem = storage_bytes(c.dtype);
  const shift_rows_of x[2] = {{c.q, const_cast<void*>(s.gla.q), size_t(c.H) * c.K * elem},
                              {c.d_o, const_cast<void*>(s.gla.d_o), size_t(c.H) * c.V * elem}};
  // q, and backward do, the terms' counters zeroed.
  return shift_rows(x, backward ? 2 : 1, rows, idx, backward ? s.counters : nullptr,
                    backward ? c.H : 0, c.stream);
}

cudaError_t launch_forward_terms(const call& c, const shifted& s, const sequences& seqs,
                                 const void* u) {
  if (s.on_walk) return cudaSuccess;  // the walk and launch_before wrote o
  const unsigned blocks = row_blocks(rows_of(c));
  const dim3 grid(blocks + sequence_count(c, seqs), static_cast<unsigned>(c.H));
  return with_types(c.dtype, c.state_fp32, [&](auto x, auto st) {
    using S = decltype(x);
    using St = decltype(st);
    per_lane(c, [&](auto n) {
      forward_terms_kernel<S, St, decltype(n)::value><<<grid, kThreads, 0, c.stream>>>(
          terms_of<S, St>(c, seqs, u), static_cast<const S*>(s.o_prev), static_cast<S*>(c.o),
          blocks);
    });
    return cudaGetLastError();
  });
}

cudaError_t launch_backward_terms(const call& c, const shifted& s, const sequences& seqs,
                                  const void* u, void* du) {
  const unsigned blocks = row_blocks(rows_of(c));
  const unsigned groups = c.h0 ? static_cast<unsigned>((c.K + kWarps - 1) / kWarps) : 0;
  const dim3 grid(blocks + sequence_count(c, seqs) * groups, static_cast<unsigned>(c.H));
  return with_types(c.dtype, c.state_fp32, [&](auto x, auto st) {
    using S = decltype(x);
    using St = decltype(st);
    using A = acc_of<S>;
    const terms_out<S, St> out{static_cast<const S*>(s.o_prev),
                               static_cast<S*>(c.dq),
                               static_cast<S*>(c.dk),
                               static_cast<S*>(c.dv),
                               static_cast<S*>(du),
                               static_cast<St*>(c.dh0),
                               static_cast<A*>(s.partials),
                               s.counters,
                               blocks,
                               groups};
    per_lane(c, [&](auto n) {
      backward_terms_kernel<S, St, decltype(n)::value>
          <<<grid, kThreads, 0, c.stream>>>(terms_of<S, St>(c, seqs, u), out);
    });
    return cudaGetLastError();
  });
}

}  // namespace glabench::chunked::rwkv6
