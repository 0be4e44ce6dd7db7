// Stage 3 of the fp32/fp64 chunk walks — the seed's `fused_chunk_gla_fwd_kernel`, the
// state pass: S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v, kept transposed (Sᵀ) in the consumer warps'
// registers, where stage 5 reads it as it is.
#pragma once

#include <type_traits>

#include "../reversed_tokens.hpp"
#include "layout.cuh"

namespace glabench::chunked::walk_fp {

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
// kExactV: v exact in TF32 (fp16's tokens), its small term left out (mma.cuh).
template <class Z, bool kExactV = false>
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
      P::template mma<kExactV>(d, vt[ks], b);
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

// ---- stage 3 in the pipelined fp64 walk (../forward_fp64_dmma.cuh) ---------------
// There consumer warp cw keeps the part of Sᵀ at V rows 16·(cw%4) … and features
// 64·(cw/4) …: 8 accumulator tiles of m16n8k4, tile j holding features 64·(cw/4) + 8j …,
// which are stage 5's A operand as they are. The two warps of a row block each hold half
// of its features. Its update and stage 5 are the walk's consumer loop
// (../forward_fp64_dmma.cuh).
struct state_t64 {
  double s[8][4];
};
template <class St, class F,
          std::enable_if_t<std::is_same_v<std::remove_const_t<St>, state_t64>, int> = 0>
__device__ __forceinline__ void for_each_state(St& S, int cw, int lane, F f) {
  const int rb = cw & 3, kh = cw >> 2;
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      f(S.s[j][e], 64 * kh + 8 * j + acc_col(lane, e), 16 * rb + acc_row(lane, e));
}

// Calls f(s, feature, column) for every element s of the warp's state: fp32's Sᵀ (warp w:
// columns 16w …, all features; state_t_regs) or fp64's (state_t64). Column is within the
// block's V slab.
template <class T, int J, class F>
__device__ __forceinline__ void for_each_state(T (&S)[J][4], int warp, int lane, F f) {
#pragma unroll
  for (int j = 0; j < J; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(S[j][e], 8 * j + acc_col(lane, e), 16 * warp + acc_row(lane, e));
}

// The state before 64-token chunk m into its slot (args::state_slots): the block's columns
// from v0 (its first V column).
template <class T, class St>
__device__ __forceinline__ void fp_store_slot(const state_slots<T>& s, int m, const St& S, int v0,
                                              int warp, int lane) {
  const int slot = s.reversed ? reversed::chunk_of_state(m, s.chunks) : m;
  T* dst = s.states + (static_cast<int64_t>(blockIdx.y) * (s.chunks + 1) + slot) * s.Kp * s.Vp;
  for_each_state(S, warp, lane, [&](const T& x, int row, int col) {
    if (row < s.Kp && v0 + col < s.Vp) dst[static_cast<int64_t>(row) * s.Vp + v0 + col] = x;
  });
}

// The state tile of the ABI's [B·H][K][V] layout (h0, ht) as the warp's part of the state,
// the block's columns from v0: zeros outside K and V, or when absent.
template <class T, class In, class St>
__device__ __forceinline__ void fp_load_state(const T* src, const args<T, In>& a, St& S, int v0,
                                              int warp, int lane) {
  for_each_state(S, warp, lane, [&](T& s, int row, int col) {
    const bool in = src && row < a.K && v0 + col < a.V;
    s = in ? src[(static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + v0 + col] : T(0);
  });
}
template <class T, class In, class St>
__device__ __forceinline__ void fp_store_state(T* dst, const args<T, In>& a, const St& S, int v0,
                                               int warp, int lane) {
  if (!dst) return;
  for_each_state(S, warp, lane, [&](const T& s, int row, int col) {
    if (row < a.K && v0 + col < a.V)
      dst[(static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + v0 + col] = s;
  });
}

}  // namespace glabench::chunked::walk_fp
