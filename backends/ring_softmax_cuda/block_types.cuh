// Types and small pieces the ring's kernels share: the compute type per storage dtype,
// loads and stores that convert, the pair's geometry, and the launch check.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace glabench::ring {

// fp64 problems compute and keep lse in fp64; fp32, bf16 and fp16 in fp32 (never TF32: the
// products are plain FFMA).
template <typename T>
struct compute_type {
  using type = float;
};
template <>
struct compute_type<double> {
  using type = double;
};
template <typename T>
using acc_t = typename compute_type<T>::type;

template <typename A>
__device__ __forceinline__ A load_as(const double* p) {
  return static_cast<A>(*p);
}
template <typename A>
__device__ __forceinline__ A load_as(const float* p) {
  return static_cast<A>(*p);
}
template <typename A>
__device__ __forceinline__ A load_as(const __nv_bfloat16* p) {
  return static_cast<A>(__bfloat162float(*p));
}
template <typename A>
__device__ __forceinline__ A load_as(const __half* p) {
  return static_cast<A>(__half2float(*p));
}
__device__ __forceinline__ void store_from(double* p, double x) {
  *p = x;
}
__device__ __forceinline__ void store_from(float* p, float x) {
  *p = x;
}
__device__ __forceinline__ void store_from(__nv_bfloat16* p, float x) {
  *p = __float2bfloat16(x);
}
__device__ __forceinline__ void store_from(__half* p, float x) {
  *p = __float2half(x);
}

template <typename A>
__device__ __forceinline__ A neg_inf() {
  return -__int_as_float(0x7f800000);
}
template <>
__device__ __forceinline__ double neg_inf<double>() {
  return -__longlong_as_double(0x7ff0000000000000LL);
}

__device__ __forceinline__ float exp_of(float x) {
  return __expf(x);
}
__device__ __forceinline__ double exp_of(double x) {
  return exp(x);
}
__device__ __forceinline__ float log_of(float x) {
  return __logf(x);
}
__device__ __forceinline__ double log_of(double x) {
  return log(x);
}

// A (query chunk, key chunk) pair on the token axis of [B,T,H,X] tensors.
struct pair_geometry {
  int B, H, D, V;
  int64_t T;
  int64_t q_begin, q_len, kv_begin, kv_len;
  bool causal;  // mask key position > query position (only the diagonal pair needs it)
  // A packed batch (B = 1): sequence n is tokens [cu_seqlens[n], cu_seqlens[n+1]), and a
  // query sees only its own sequence's keys. NULL: one sequence per batch row.
  const int32_t* cu_seqlens = nullptr;
  int num_seqs = 0;
};

// The tokens [begin, end) of the sequence holding token t (all T without cu_seqlens), by
// binary search over the offsets, clamped to [0, T) so that no offset can send a load
// out of the tensor.
struct token_span {
  int64_t begin, end;
};
__device__ __forceinline__ token_span sequence_of(const pair_geometry& g, int64_t t) {
  if (!g.cu_seqlens) return {0, g.T};
  int lo = 0, hi = g.num_seqs;  // the last n with cu_seqlens[n] <= t
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (g.cu_seqlens[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  const int64_t begin = min(max(int64_t(g.cu_seqlens[lo]), int64_t(0)), g.T);
  return {begin, min(max(int64_t(g.cu_seqlens[lo + 1]), begin), g.T)};
}

// Row t of head (b, h) in a [B,T,H,X] tensor.
__host__ __device__ __forceinline__ int64_t token_row(int64_t b, int64_t t, int64_t h, int64_t T,
                                                      int64_t H) {
  return (b * T + t) * H + h;
}

// Is the pair's first or last pair for its chunk (of queries forward and for dq; of keys
// for dk and dv)? The first writes the accumulator, the last writes the final output.
struct visit {
  bool first, last;
};

}  // namespace glabench::ring
