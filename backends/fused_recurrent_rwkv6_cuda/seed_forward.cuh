// Seed mode's forward: fla's fused_recurrent_rwkv6_fwd_kernel as seed 004 reads it,
// transcribed from Triton to CUDA.
//
// The grid is (NV, NK, B·H) with BK = min(32, next power of two ≥ K) and BV likewise for
// V, NK = ⌈K/BK⌉, NV = ⌈V/BV⌉. A program keeps a BV×BK fp32 (fp64 for fp64) tile of the
// state and walks every token:
//   _kv = k ⊗ v;   _o = Σ_k (h + _kv ⊙ u) ⊙ q·scale;   h = h ⊙ e^{w};   h += _kv
// reading the state before the update and adding the bonus u of the current token. Its
// _o is the share of its BK key rows, written to a partial output [NK, B, T, H, V] that
// the seed sums over NK afterwards (here seed_reduce_kernel, in a fixed order).
//
// CUDA mapping: a block is the program, BV threads; thread j owns row j of the tile (its
// value column, BK state entries in registers), so the Σ_k is in-thread. Every thread
// reads the same BK entries of k, q and w per token (broadcast loads).
#pragma once

#include "scan_args.hpp"
#include "scan_tile.cuh"

namespace glabench::fused_recurrent_rwkv6 {

using parallel_scan::compute_t;
using parallel_scan::scan_args;

// Values of the partial output: NK · B·T·H·V in the compute type.
inline size_t seed_partial_values(const scan_args& a, int64_t nk) {
  return static_cast<size_t>(nk * a.B * a.T * a.H * a.V);
}

template <typename Elem, int BK>
__global__ void seed_forward_kernel(scan_args a) {
  using C = compute_t<Elem>;
  using parallel_scan::to_compute;
  const int64_t iv = blockIdx.x, ik = blockIdx.y, bh = blockIdx.z;
  const int64_t b = bh / a.H, h = bh % a.H;
  const int64_t j = iv * blockDim.x + threadIdx.x, i0 = ik * BK;
  const bool j_in = j < a.V;
  const Elem *q = static_cast<const Elem*>(a.q), *k = static_cast<const Elem*>(a.k),
             *v = static_cast<const Elem*>(a.v), *w = static_cast<const Elem*>(a.g),
             *u_in = static_cast<const Elem*>(a.u), *h0 = static_cast<const Elem*>(a.h0);
  const C scale = static_cast<C>(a.scale);

  C u[BK], state[BK];  // state[e]: h[j][i0 + e]
#pragma unroll
  for (int e = 0; e < BK; ++e) {
    const int64_t i = i0 + e;
    const bool in = i < a.K;
    u[e] = in ? to_compute<C>(u_in[h * a.K + i]) : C(0);
    state[e] = h0 && in && j_in ? to_compute<C>(h0[(bh * a.K + i) * a.V + j]) : C(0);
  }
  C* partial = static_cast<C*>(a.workspace) + ik * a.B * a.T * a.H * a.V;
  for (int64_t t = 0; t < a.T; ++t) {
    const int64_t token = (b * a.T + t) * a.H + h;
    const C vj = j_in ? to_compute<C>(v[token * a.V + j]) : C(0);
    C o = C(0);
#pragma unroll
    for (int e = 0; e < BK; ++e) {
      const int64_t i = i0 + e;
      const bool in = i < a.K;
      const C ki = in ? to_compute<C>(k[token * a.K + i]) : C(0);
      const C qi = in ? to_compute<C>(q[token * a.K + i]) * scale : C(0);
      const C wi = in ? to_compute<C>(w[token * a.K + i]) : C(0);
      const C kv = ki * vj;
      o += (state[e] + kv * u[e]) * qi;
      state[e] = state[e] * parallel_scan::exp_of(wi) + kv;
    }
    if (j_in) partial[token * a.V + j] = o;
  }
  if (a.ht && j_in) {
    Elem* ht = static_cast<Elem*>(a.ht);
#pragma unroll
    for (int e = 0; e < BK; ++e)
      if (i0 + e < a.K)
        ht[(bh * a.K + i0 + e) * a.V + j] = parallel_scan::to_storage<Elem>(state[e]);
  }
}

// o = Σ over the NK partial outputs, in order.
template <typename Elem>
__global__ void __launch_bounds__(256) seed_reduce_kernel(scan_args a, int64_t nk) {
  using C = compute_t<Elem>;
  const int64_t n = int64_t(blockIdx.x) * 256 + threadIdx.x, count = a.B * a.T * a.H * a.V;
  if (n >= count) return;
  const C* partial = static_cast<const C*>(a.workspace);
  C sum = C(0);
  for (int64_t ik = 0; ik < nk; ++ik) sum += partial[ik * count + n];
  static_cast<Elem*>(a.o)[n] = parallel_scan::to_storage<Elem>(sum);
}

}  // namespace glabench::fused_recurrent_rwkv6
