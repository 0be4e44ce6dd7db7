// Stage 1 of the fp32/fp64 chunk walk — the seed's `fwd_decay_cumsum`: the chunk's
// cumulative log2 gates, to fp64 accuracy whatever the storage, summed in token order.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk_fp {

// 2^n for an integer n ≤ 127, as a float's exponent bits (0 below the normal range).
__device__ __forceinline__ float pow2i(int n) {
  return n >= -126 ? __int_as_float((n + 127) << 23) : 0.f;
}

// 2^x and 2^{−x} in T for x ≤ 64 (the mild chunks' bound; x ≤ 0 elsewhere). fp64: exp2.
// fp32: x = n + r with n an integer and |r| ≤ 1/2, both exact in fp64, so the fp32
// exponential sees no rounding of a large |x| (exp2f((float)x) would add ulp(|x|)·ln 2);
// 2^x = exp2f(r)·2^n, 2 ulp, and 2^{−x} shares the split.
template <class T>
__device__ __forceinline__ T exp2_of(double x) {
  if constexpr (sizeof(T) == 8) {
    return exp2(x);
  } else {
    const int n = max(__double2int_rn(x), -200);
    return exp2f(static_cast<float>(x - n)) * pow2i(n);
  }
}
// For |x| ≤ 64 only (a mild chunk's G): n comes from the low word of x + 1.5·2^52 (x
// rounded to an integer by the add), and 2^{±n} is added to the exponent bits of 2^{±r}
// (ex2.approx on [−1/2, 1/2], 2 ulp), which stays normal.
template <class T>
__device__ __forceinline__ void exp2_both(double x, T& up, T& down) {
  if constexpr (sizeof(T) == 8) {
    up = exp2(x), down = exp2(-x);
  } else {
    constexpr double kRound = 6755399441055744.0;  // 1.5·2^52
    const double big = x + kRound;
    const int n = __double2loint(big);
    const float r = static_cast<float>(x - (big - kRound));
    up = __int_as_float(__float_as_int(tc::ex2(r)) + (n << 23));
    down = __int_as_float(__float_as_int(tc::ex2(-r)) - (n << 23));
  }
}

// A cumulative log2 gate: fp64 in fp64; in fp32 the unevaluated sum hi + lo of two floats
// (float2: x = hi, y = lo), kept by two-sum arithmetic to about 2^-44 of itself, so that
// stages 1–2 stay off the fp64 pipe.
template <class T>
struct gate_of {
  using type = double;
};
template <>
struct gate_of<float> {
  using type = float2;
};
template <class T>
using gate_t = typename gate_of<T>::type;

// s + g·log2 e.
__device__ __forceinline__ double add_gate(double s, double g) { return fma(g, kLog2e, s); }
__device__ __forceinline__ float2 add_gate(float2 s, float g) {
  constexpr float kL1 = 1.44269502162933349609375f;  // log2 e rounded to float
  constexpr float kL2 = 1.925962991e-08f;            // log2 e − kL1
  const float p = g * kL1, pe = fmaf(g, kL2, fmaf(g, kL1, -p));  // g·log2 e = p + pe
  const float t = s.x + p, z = t - s.x, e = (s.x - (t - z)) + (p - z);  // s.x + p = t + e
  return make_float2(t, s.y + (e + pe));
}
__device__ __forceinline__ double as_double(double s) { return s; }
__device__ __forceinline__ double as_double(float2 s) {
  return static_cast<double>(s.x) + static_cast<double>(s.y);
}

// 2^{G} and 2^{−G} for G = off + l of a mild chunk (|G| ≤ 64 in fp32): fp64 as
// exp2_both. fp32 adds the two-float sums, rounds hi to an integer n by adding 1.5·2^23,
// and takes 2^{±r} (r = hi − n + lo, |r| ≤ 1/2 + ε) with n added to its exponent bits.
__device__ __forceinline__ void exp2_both_at(double off, double l, double& up, double& down) {
  exp2_both<double>(off + l, up, down);
}
__device__ __forceinline__ void exp2_both_at(float2 off, float2 l, float& up, float& down) {
  constexpr float kRound = 12582912.f;  // 1.5·2^23
  const float t = off.x + l.x, z = t - off.x, e = (off.x - (t - z)) + (l.x - z);
  const float big = t + kRound, n = big - kRound;
  const float r = (t - n) + ((off.y + l.y) + e);
  const int n23 = (__float_as_int(big) - __float_as_int(kRound)) << 23;
  up = __int_as_float(__float_as_int(tc::ex2(r)) + n23);
  down = __int_as_float(__float_as_int(tc::ex2(-r)) - n23);
}

// ---- stage 1: fwd_decay_cumsum -------------------------------------------------------
// Thread (feature f, half h) holds its half's running sums l[i] = Σ_{u ≤ i} g[h·C/2 + u]·
// log2 e, in token order, and leaves the half's total in tots[h][f]. After a barrier,
// G[t] = tots[0][f] + l[i] in the second half (chunk_gates): every token's G, padded ones
// included, is that one sum, so a ragged chunk's G[C−1] is its last real token's exactly.
// Returns the half's total.
template <class T>
__device__ __forceinline__ double fp_decay_cumsum(const T* buf, double* tots, int f, int h,
                                                  gate_t<T> (&l)[sizes<T>::C / 2]) {
  using Z = sizes<T>;
  constexpr int H2 = Z::C / 2;
  const T* g = buf + layout<T>::g;
  gate_t<T> s{};
#pragma unroll
  for (int u = 0; u < H2; ++u) {
    s = add_gate(s, g[swz<T, Z::KP>(h * H2 + u, f)]);
    l[u] = s;
  }
  const double total = as_double(s);
  tots[h * Z::KP + f] = total;
  return total;
}

// The gate before the thread's half (0 or the first half's total) and G[C−1], from the
// totals stage 1 left (after its barrier).
template <int KP>
struct chunk_gates {
  double off, last;
  __device__ chunk_gates(const double* tots, int f, int h)
      : off(h ? tots[f] : 0.0), last(tots[f] + tots[KP + f]) {}
  // off as a gate of T (fp32: its float rounding and the rest).
  template <class T>
  __device__ gate_t<T> offset() const {
    if constexpr (sizeof(T) == 8) {
      return off;
    } else {
      const float hi = static_cast<float>(off);
      return make_float2(hi, static_cast<float>(off - hi));
    }
  }
};

}  // namespace glabench::chunked::walk_fp
