// Per-dtype choices of the WMMA kernels (../forward_wmma.cuh, ../backward_wmma.cuh and the
// seed reference's): the tensor-core operand and accumulator types, the WMMA tile of each,
// and the K and V slab widths that keep a block's shared memory within Hopper's 227 KB.
//
//   storage  operand (tensor cores)              accumulate  WMMA tile  BK  BV  BV_out BV_grad
//   bf16     bf16                                fp32        16×16×16   64  64  128    64
//   fp32     fp32 as 3×TF32 (hi·hi+hi·lo+lo·hi)  fp32        16×16×8    64  64  64     32
//   fp64     fp64 (DMMA)                         fp64        8×8×4      32  32  32     16
//
// BV is the V slab of the state kernels, BV_out of the output and dv kernels (wide, so
// that a chunk's intra scores are computed once for as many columns as fit), BV_grad of
// the dq/dk/dg kernel, whose shared memory is the fullest. BV_out is a multiple of BV.
//
// Every chunk is kChunk = 64 tokens, cut into kSub = 16-token sub-chunks for the
// intra-chunk scores (stage 4).
#pragma once

#include <cuda_bf16.h>
#include <mma.h>

#include <type_traits>

namespace glabench::chunked {

inline constexpr int kChunk = 64;
inline constexpr int kSub = 16;
inline constexpr int kThreads = 256;
inline constexpr int kWarps = kThreads / 32;

template <class Storage>
struct traits;

template <>
struct traits<__nv_bfloat16> {
  using storage_t = __nv_bfloat16;
  using op_t = __nv_bfloat16;
  using acc_t = float;
  using gate_t = float;
  static constexpr int TM = 16, TN = 16, TK = 16;
  static constexpr int BK = 64, BV = 64, BV_out = 128, BV_grad = 64;
  static constexpr int kSplits = 1;
  // The states and scores that o's products read carry a second bf16 term, the residual
  // of their rounding (S = S_hi + S_lo, A = A_hi + A_lo): one rounding to bf16 fewer in o.
  static constexpr bool kResidual = true;
  // bf16 results round to 8 bits: the fast exponential's 2 ulp are invisible.
  static __device__ __forceinline__ float exp(float x) { return __expf(x); }
};

template <>
struct traits<float> {
  using storage_t = float;
  using op_t = float;
  using acc_t = float;
  using gate_t = double;  // cumulative gates: see stage1_fwd_decay_cumsum.cuh
  static constexpr int TM = 16, TN = 16, TK = 8;
  static constexpr int BK = 64, BV = 64, BV_out = 64, BV_grad = 32;
  static constexpr int kSplits = 3;  // 3×TF32: fp32 accuracy, never plain TF32
  static constexpr bool kResidual = false;
  static __device__ __forceinline__ float exp(float x) { return expf(x); }
};

template <>
struct traits<double> {
  using storage_t = double;
  using op_t = double;
  using acc_t = double;
  using gate_t = double;
  static constexpr int TM = 8, TN = 8, TK = 4;
  static constexpr int BK = 32, BV = 32, BV_out = 32, BV_grad = 16;
  static constexpr int kSplits = 1;
  static constexpr bool kResidual = false;
  static __device__ __forceinline__ double exp(double x) { return ::exp(x); }
};

// A shared-memory row's length for `cols` elements of T: 16 bytes of padding, which
// WMMA's leading-dimension rule allows and which staggers the rows across banks.
template <class T>
__host__ __device__ constexpr int ld_of(int cols) {
  return cols + static_cast<int>(16 / sizeof(T));
}

// A value as operand type T (round to nearest).
template <class T, class X>
__device__ __forceinline__ T to_op(X x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(static_cast<float>(x));
  else
    return static_cast<T>(x);
}

__device__ __forceinline__ float to_acc_f(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ float to_acc_f(float x) {
  return x;
}
__device__ __forceinline__ double to_acc_f(double x) {
  return x;
}

}  // namespace glabench::chunked
