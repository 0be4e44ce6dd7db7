// Stage 1 of the fp32/fp64 chunk walk — the seed's `fwd_decay_cumsum`: the chunk's
// cumulative log2 gates, in fp64 whatever the storage, summed in token order.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk_fp {

// 2^n for an integer n ≤ 127, as a float's exponent bits (0 below the normal range).
__device__ __forceinline__ float pow2i(int n) {
  return n >= -126 ? __int_as_float((n + 127) << 23) : 0.f;
}

// 2^x in T for x ≤ 0 (any chunk). fp64: exp2. fp32: x = n + r with n an integer and
// |r| ≤ 1/2, both exact in fp64, so the fp32 exponential sees no rounding of a large |x|
// (exp2f((float)x) would add ulp(|x|)·ln 2): 2^x = exp2f(r)·2^n, 2 ulp.
template <class T>
__device__ __forceinline__ T exp2_of(double x) {
  if constexpr (sizeof(T) == 8) {
    return exp2(x);
  } else {
    const int n = max(__double2int_rn(x), -200);
    return exp2f(static_cast<float>(x - n)) * pow2i(n);
  }
}
// For |x| ≤ 96 (fp32) or 480 (fp64) only: a mild chunk's G. fp64: 2^{−x} as the reciprocal
// of 2^x (rounded to nearest: 1.5 ulp from 2^{−x}, at a third of an exponential's cost).
// fp32, off the fp64 pipe but for one add: x + 1.5·2^29
// leaves round(x·2^23) in its low word (fixed point, 2^-24 from x), whose top bits are
// n = ⌊x⌋ and whose low 23 bits are r = x − n ∈ [0, 1) as a float's mantissa; 2^{±n} is
// then added to the exponent bits of 2^{±r} (ex2.approx, 2 ulp), which stays normal.
template <class T>
__device__ __forceinline__ void exp2_both(double x, T& up, T& down) {
  if constexpr (sizeof(T) == 8) {
    up = exp2(x), down = __drcp_rn(up);
  } else {
    constexpr double kFix = 805306368.0;  // 1.5·2^29: ulp 2^-23
    const int fixed = __double2loint(x + kFix), n = fixed >> 23;
    const float r = __int_as_float(0x3f800000 | (fixed & 0x7fffff)) - 1.f;
    up = __int_as_float(__float_as_int(tc::ex2(r)) + (n << 23));
    down = __int_as_float(__float_as_int(tc::ex2(-r)) - (n << 23));
  }
}

// x in fp64, exactly. A float by its bits, on the integer pipe rather than the
// quarter-rate conversion unit: exponent rebiased by 1023 − 127, mantissa moved up 29 bits.
// Zeros and subnormals (|x| < 2^-126) give 0; the inputs are finite (the harness refuses
// NaN and infinity).
__device__ __forceinline__ double to_double(double x) {
  return x;
}
__device__ __forceinline__ double to_double(float x) {
  const uint32_t u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0) return 0.0;
  return __hiloint2double(
      static_cast<int>((u & 0x80000000u) | (((u & 0x7fffffffu) >> 3) + (896u << 20))),
      static_cast<int>(u << 29));
}

// ---- stage 1: fwd_decay_cumsum -------------------------------------------------------
// Thread (feature f, half h) holds its half's running sums l[i] = Σ_{u ≤ i} g[h·C/2 + u]·
// log2 e, in token order, and leaves the half's total in tots[h][f]. After a barrier,
// G[t] = tots[0][f] + l[i] in the second half (chunk_gates): every token's G, padded ones
// included, is that one sum, so a ragged chunk's G[C−1] is its last real token's exactly.
// Returns the half's total. Z and L: the walk's sizes and buffer layout (fp32_pipeline.cuh,
// fp64_pipeline.cuh).
template <class T, class Z, class L>
__device__ __forceinline__ double fp_decay_cumsum(const T* buf, double* tots, int f, int h,
                                                  double (&l)[Z::C / 2]) {
  constexpr int H2 = Z::C / 2;
  const T* g = buf + L::g;
  double s = 0.0;
#pragma unroll
  for (int u = 0; u < H2; ++u) {
    s = fma(to_double(g[swz<T, Z::KP>(h * H2 + u, f)]), kLog2e, s);
    l[u] = s;
  }
  tots[h * Z::KP + f] = s;
  return s;
}

// The gate before the thread's half (0 or the first half's total) and G[C−1], from the
// totals stage 1 left (after its barrier).
template <int KP>
struct chunk_gates {
  double off, last;
  __device__ chunk_gates(const double* tots, int f, int h)
      : off(h ? tots[f] : 0.0), last(tots[f] + tots[KP + f]) {}
};

}  // namespace glabench::chunked::walk_fp
