// Stage 1 of the fp32/fp64 chunk walk — the seed's `fwd_decay_cumsum`: the chunk's
// cumulative log2 gates, in fp64 whatever the storage, summed in token order.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk_fp {

// 2^x in T: fp64 exp2; fp32 splits x = n + r (n an integer, |r| ≤ 1/2, both exact in
// fp64) so that the fp32 exponential sees no rounding of a large |x|: 2 ulp of the true
// 2^x, where exp2f((float)x) would carry ulp(|x|)·ln 2 too.
template <class T>
__device__ __forceinline__ T exp2_of(double x) {
  if constexpr (sizeof(T) == 8) {
    return exp2(x);
  } else {
    const double n = rint(x);
    return ldexpf(exp2f(static_cast<float>(x - n)), static_cast<int>(fmax(n, -300.0)));
  }
}

// ---- stage 1: fwd_decay_cumsum -------------------------------------------------------
// Thread (feature f, half h) holds G[t] = Σ_{u ≤ t} g[u]·log2 e for the C/2 tokens
// t = h·C/2 + i of its half. The second half sums the first half's gates again, in the
// same order, so both halves agree bit for bit. The last token's G goes to Gl[f], and
// 2^{G[C−1]} to E[f]. Returns G[C−1] (second half) or 0.
template <class T>
__device__ __forceinline__ double fp_decay_cumsum(const T* buf, T* E, double* Gl, int f, int h,
                                                  double (&G)[sizes<T>::C / 2]) {
  using Z = sizes<T>;
  constexpr int H2 = Z::C / 2;
  const T* g = buf + layout<T>::g;
  double s = 0.0;
  if (h == 1)
#pragma unroll
    for (int u = 0; u < H2; ++u) s = fma(static_cast<double>(g[swz<T, Z::KP>(u, f)]), kLog2e, s);
#pragma unroll
  for (int u = 0; u < H2; ++u) {
    s = fma(static_cast<double>(g[swz<T, Z::KP>(h * H2 + u, f)]), kLog2e, s);
    G[u] = s;
  }
  if (h == 0) return 0.0;
  Gl[f] = s;
  E[f] = exp2_of<T>(s);
  return s;
}

}  // namespace glabench::chunked::walk_fp
