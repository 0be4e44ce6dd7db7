// Stage 3 of the fp32/fp64 chunk walk — the seed's `fused_chunk_gla_fwd_kernel`, the
// state pass: S_n handed to stage 5 through shared memory, and S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v
// on the warp's rows, in registers.
#pragma once

#include <type_traits>

#include "../reversed_tokens.hpp"
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
// S_n into the tile stage 5 reads as its B operand, as it is ([KP][BV]). The one-pass walk
// is fp64's alone (../forward_fp64_dmma.cuh).
template <class T>
__device__ __forceinline__ void fp_state_to_shared(T* St, const state_regs<T>& S, int warp,
                                                   int lane) {
  static_assert(!mma_policy<T>::kSplit, "the one-pass walk's state tile: fp64");
  each_state_element<T>(warp, lane, [&](int r, int j, int e, int row, int col) {
    if (e % 2 == 0)  // adjacent columns, one 16-byte store
      *reinterpret_cast<double2*>(St + swz<T, sizes<T>::BV>(row, col)) =
          double2{S[r][j][e], S[r][j][e + 1]};
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

// ---- stage 3 in the pipelined fp32 walk (../forward_fp32_3xtf32.cuh) ---------------
// There a consumer warp cw keeps Sᵀ, rows (V) 16·cw … 16·cw+15 × all KP features: KP/8
// accumulator tiles of m16n8k8, tile j holding features 8j … 8j+7. Sᵀ, not S, because an
// accumulator tile of Sᵀ is already the A fragment of oᵀ = Sᵀ·q̃ᵀ (stage 5), with the
// k-step's features taken in the order 2c, 2c+1 (fp_combine_t).
template <class Z>
using state_t_regs = float[Z::KP / 8][4];

// Sᵀ ← Sᵀ·diag(pre) + vᵀ·κ, then ·diag(post), over the chunk's C tokens: κ is the
// chunk's key operand pair (kk, kk_lo), the A fragments vᵀ come in `vt` (one a k-step of
// 8 tokens), and each feature's E = 2^{G[C−1]} scales before (κ = k̂) or after
// (κ = k̃ = k̂·2^{−G[C−1]}): the same state either way. pre or post null: no scaling.
template <class Z>
__device__ __forceinline__ void fp_state_update_t(const float* kk, const float* kk_lo,
                                                  const float* pre, const float* post,
                                                  const mma_policy<float>::afrag (&vt)[Z::C / 8],
                                                  state_t_regs<Z>& S, int lane) {
  using P = mma_policy<float>;
  const int g = lane >> 2, c = lane & 3;
  auto scale = [&](const float* E) {
#pragma unroll
    for (int j = 0; j < Z::KP / 8; ++j) {
      const float2 e = *reinterpret_cast<const float2*>(E + 8 * j + 2 * c);
      S[j][0] *= e.x, S[j][1] *= e.y, S[j][2] *= e.x, S[j][3] *= e.y;
    }
  };
  if (pre) scale(pre);
  static_assert(Z::KP == 128, "swz_key_lane's tile");
  int lane0[4], lane1[4];  // κ's B fragment rows c and c+4: the lane's part of the offsets
#pragma unroll
  for (int jj = 0; jj < 4; ++jj) {
    lane0[jj] = swz_key_lane(g, c, jj, false), lane1[jj] = swz_key_lane(g, c, jj, true);
  }
  // The chunk's vᵀ·κ in an accumulator of its own, added to S rounded to nearest: the
  // tensor cores' fp32 accumulation truncates, and a state that does not decay (g = 0)
  // would carry that bias over the whole sequence (1e-4 relative at T = 16384).
#pragma unroll
  for (int j = 0; j < Z::KP / 8; ++j) {
    float d[4] = {};
#pragma unroll
    for (int ks = 0; ks < Z::C / 8; ++ks) {
      const int imm = 1024 * ks + 32 * (j / 4), a0 = lane0[j % 4] + imm, a1 = lane1[j % 4] + imm;
      P::bfrag b;
      b.hi[0] = __float_as_uint(kk[a0]), b.hi[1] = __float_as_uint(kk[a1]);
      b.lo[0] = __float_as_uint(kk_lo[a0]), b.lo[1] = __float_as_uint(kk_lo[a1]);
      P::mma(d, vt[ks], b);
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) S[j][e] += d[e];
  }
  if (post) scale(post);
}

// vᵀ's A fragment for the k-step of tokens 8·ks …, rows 16·cw … of the V slab, split on
// the fly from the raw v tile ([C][BV]).
template <class Z>
__device__ __forceinline__ mma_policy<float>::afrag fp_vt_frag(const float* v, int ks, int cw,
                                                               int lane) {
  return mma_policy<float>::load_a([&](int m, int k) { return v[swz<float, Z::BV>(k, m)]; },
                                   16 * cw, 8 * ks, lane);
}

// Calls f(s, feature, column) for every element s of the warp's state, whichever walk's
// layout it has: the one-pass walk's S (warp w: features 16w …, all of the slab's columns;
// state_regs) or the pipelined walk's Sᵀ (warp w: columns 16w …, all features;
// state_t_regs). Column is within the block's V slab.
template <class T, int RB, int CT, int N, class F>
__device__ __forceinline__ void for_each_state(T (&S)[RB][CT][N], int warp, int lane, F f) {
  each_state_element<std::remove_const_t<T>>(
      warp, lane, [&](int r, int j, int e, int row, int col) { f(S[r][j][e], row, col); });
}
template <class T, int J, class F>
__device__ __forceinline__ void for_each_state(T (&S)[J][4], int warp, int lane, F f) {
#pragma unroll
  for (int j = 0; j < J; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(S[j][e], 8 * j + acc_col(lane, e), 16 * warp + acc_row(lane, e));
}

// The state before 64-token chunk m into its slot (args::state_slots): the block's V slab
// of sizes<T>::BV columns, in either walk's state layout; the one-pass walk's accumulator
// pairs (adjacent columns) as one store each — Vp, a multiple of the WMMA kernels' BV_out,
// is even, so a pair starting at an even column below Vp ends below it, 2·sizeof(T) aligned.
template <class T, class St>
__device__ __forceinline__ void fp_store_slot(const state_slots<T>& s, int m, const St& S, int warp,
                                              int lane) {
  const int slot = s.reversed ? reversed::chunk_of_state(m, s.chunks) : m;
  const int v0 = blockIdx.x * sizes<T>::BV;
  T* dst = s.states + (static_cast<int64_t>(blockIdx.y) * (s.chunks + 1) + slot) * s.Kp * s.Vp;
  if constexpr (std::rank_v<St> == 3) {
    using T2 = std::conditional_t<sizeof(T) == 4, float2, double2>;
    each_state_element<T>(warp, lane, [&](int r, int j, int e, int row, int col) {
      if (e % 2 == 0 && row < s.Kp && v0 + col < s.Vp)
        *reinterpret_cast<T2*>(dst + static_cast<int64_t>(row) * s.Vp + v0 + col) =
            T2{S[r][j][e], S[r][j][e + 1]};
    });
  } else {
    for_each_state(S, warp, lane, [&](const T& x, int row, int col) {
      if (row < s.Kp && v0 + col < s.Vp) dst[static_cast<int64_t>(row) * s.Vp + v0 + col] = x;
    });
  }
}

// The state tile of the ABI's [B·H][K][V] layout (h0, ht) as the warp's part of the state:
// zeros outside K and V, or when absent.
template <class T, class In, class St>
__device__ __forceinline__ void fp_load_state(const T* src, const args<T, In>& a, St& S, int warp,
                                              int lane) {
  const int v0 = blockIdx.x * sizes<T>::BV;
  for_each_state(S, warp, lane, [&](T& s, int row, int col) {
    const bool in = src && row < a.K && v0 + col < a.V;
    s = in ? src[(static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + v0 + col] : T(0);
  });
}
template <class T, class In, class St>
__device__ __forceinline__ void fp_store_state(T* dst, const args<T, In>& a, const St& S, int warp,
                                               int lane) {
  if (!dst) return;
  const int v0 = blockIdx.x * sizes<T>::BV;
  for_each_state(S, warp, lane, [&](const T& s, int row, int col) {
    if (row < a.K && v0 + col < a.V)
      dst[(static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + v0 + col] = s;
  });
}

}  // namespace glabench::chunked::walk_fp
