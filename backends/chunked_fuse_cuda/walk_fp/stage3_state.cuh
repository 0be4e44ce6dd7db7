// Stage 3 of the fp32/fp64 chunk walk — the seed's `fused_chunk_gla_fwd_kernel`, the
// state pass: S_n handed to stage 5 through shared memory, and S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v
// on the warp's rows, in registers.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk_fp {

// The warp's state rows: RB row blocks × CT column tiles of accumulators.
template <class T>
using state_regs = T[sizes<T>::RB][sizes<T>::CT][mma_policy<T>::NACC];

// Calls f(r, j, e, row, col) for every accumulator element of the warp's state rows.
template <class T, class F>
__device__ __forceinline__ void each_state_element(int warp, int lane, F f) {
  using Z = sizes<T>;
  using P = mma_policy<T>;
#pragma unroll
  for (int r = 0; r < Z::RB; ++r)
#pragma unroll
    for (int j = 0; j < Z::CT; ++j)
#pragma unroll
      for (int e = 0; e < P::NACC; ++e)
        f(r, j, e, 16 * warp + r * P::TM + acc_row(lane, e), j * P::TN + acc_col(lane, e));
}

// ---- stage 3: the state -------------------------------------------------------------
// S_n, transposed, into the operand tiles stage 5 reads (St, and St_lo in fp32).
template <class T>
__device__ __forceinline__ void fp_state_to_shared(T* St, T* St_lo, const state_regs<T>& S,
                                                   int warp, int lane) {
  each_state_element<T>(warp, lane, [&](int r, int j, int e, int row, int col) {
    mma_policy<T>::store_op(St, St_lo, swz<T, sizes<T>::KP>(col, row), S[r][j][e]);
  });
}

// S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v (k̂ᵀ read transposed from its tile).
template <class T>
__device__ __forceinline__ void fp_state_update(const T* buf, const T* E, state_regs<T>& S,
                                                int warp, int lane) {
  using Z = sizes<T>;
  using P = mma_policy<T>;
  using L = layout<T>;
  each_state_element<T>(warp, lane,
                        [&](int r, int j, int e, int row, int) { S[r][j][e] *= E[row]; });
  const T* kh = buf + L::g;
  const T* v = buf + L::v;
  auto kh_t = [&](int m, int kk) { return kh[swz<T, Z::KP>(kk, m)]; };
  auto vx = [&](int kk, int n) { return v[swz<T, Z::BV>(kk, n)]; };
#pragma unroll
  for (int k0 = 0; k0 < Z::C; k0 += P::TK) {
    typename P::afrag af[Z::RB];
#pragma unroll
    for (int r = 0; r < Z::RB; ++r) af[r] = P::load_a(kh_t, 16 * warp + r * P::TM, k0, lane);
#pragma unroll
    for (int j = 0; j < Z::CT; ++j) {
      const typename P::bfrag bf = P::load_b(vx, k0, j * P::TN, lane);
#pragma unroll
      for (int r = 0; r < Z::RB; ++r) P::mma(S[r][j], af[r], bf);
    }
  }
}

// The state tile of the ABI's [B·H][K][V] layout (h0, ht) as the warp's rows: zeros
// outside K and V, or when absent.
template <class T>
__device__ __forceinline__ void fp_load_state(const T* src, const args<T>& a, state_regs<T>& S,
                                              int warp, int lane) {
  const int v0 = blockIdx.x * sizes<T>::BV;
  each_state_element<T>(warp, lane, [&](int r, int j, int e, int row, int col) {
    const bool in = src && row < a.K && v0 + col < a.V;
    S[r][j][e] = in ? src[(static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + v0 + col] : T(0);
  });
}
template <class T>
__device__ __forceinline__ void fp_store_state(T* dst, const args<T>& a, const state_regs<T>& S,
                                               int warp, int lane) {
  if (!dst) return;
  const int v0 = blockIdx.x * sizes<T>::BV;
  each_state_element<T>(warp, lane, [&](int r, int j, int e, int row, int col) {
    if (row < a.K && v0 + col < a.V)
      dst[(static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + v0 + col] = S[r][j][e];
  });
}

}  // namespace glabench::chunked::walk_fp
