// The backward's gradient walk for bf16: dq, dk, dv and dg of one chunk in one block, on
// mma.sync with the score matrices going from their accumulators straight into the next
// product's A operand. It reads what the state and dS walks
// (backward_bf16_mma_states.cuh) left: S_n, the state before chunk n, and dS_n, the gradient
// of the state after it, and sums Y_n = Σ_v S_n ⊙ dS_n from them (state_operands_and_y; so
// the two walks need not wait for each other). It replaces chunk_dv_kernel and
// chunk_dq_dk_dg_kernel (backward_wmma.cuh) for the chunks it takes: the same terms, summed
// in another order with other roundings.
//
// A reference at each 16-token sub-chunk's start, as in the forward (walk_prepare_grads):
// for token t of sub-chunk m, l[t] ≤ 0 is its log2 gate summed from the sub-chunk's start,
// T_m the sub-chunk's total, Γ_m = T_0 + … + T_{m−1} the gate before it, and
//   q̄ = q·2^{l},  k̄ = k·2^{−l},  k̆ = k·2^{T_m − l}  (keys decayed to their sub-chunk's end).
// With s = scale, the scores taken strictly below the diagonal, and the diagonal pair
// dA[t][t] added apart (dg needs dq and dk without it, as backward_wmma.cuh derives):
//
//   dA   = s·do·vᵀ                                   (rows t, keys j)
//   dq   = 2^{l} ⊙ D + dA[t][t]·k[t],   D = Σ over key blocks, at reference Γ_mt:
//          D ← s·do·S_nᵀ;  for m < mt: D ← 2^{T_m} ⊙ D + dA_m·k̆_m;  D += dA_mt·k̄_mt
//   dk   = 2^{−l} ⊙ Kr + dA[t][t]·q[t] + 2^{G[C−1] − G} ⊙ (v·dS_nᵀ),  Kr at reference Γ_mt:
//          for m from the last down to mt + 1: Kr ← 2^{T_m} ⊙ Kr + dAᵀ_m·q̄_m; then
//          Kr ← 2^{T_mt} ⊙ Kr + dAᵀ_mt·q̄_mt
//   dv   = k̂·dS_n + (s·Aᵀ)·do,  Aᵀ (keys j, rows t ≥ j) block by block: k̄·q̄ᵀ on the
//          diagonal, k̆·q̄ᵀ next to it, (k̄·2^{Γ_m − Γ_mt})·q̄ᵀ further; k̂ = k̄·2^{G[C−1] − Γ_mt}
//   dg_t = Σ_{r≥t} (q ⊙ dq' − k ⊙ dk'_intra)_r + Σ_{r<t} (k ⊙ dk_inter)_r + 2^{G[C−1]} ⊙ Y_n
//
// Every factor but k̄'s is ≤ 1: each accumulator is decayed one sub-chunk at a time, as
// fla's chunk_gla does with its sub-chunk references, so the cost is one for any gates.
// k̄ ≤ |k|·2^{−T_mt} ≤ |k|·2^96 but for strong features, whose gates over a sub-chunk sum
// below −kSafeLog2 (about 1 in 12 000 sub-chunk features under −exp(N(−0.5, 1)) gates, in
// 4 % of chunks): their k̄ is zero (walk_prepare_grads), their terms of dv are added apart
// (add_strong_features), and after the walk the block writes their columns' dq, dk and dg
// again, pair by pair (rewrite_strong_features) — up to kRewriteMost in a 64-feature half
// of K; a half with more leaves its dq, dk and dg to the WMMA bodies (the warps of that half
// store none), as does a whole chunk with a gate above 0 or not finite. The state walk lists
// both (strong_features.hpp, backward_bf16_mma_states.cuh);
// backward_wmma.cuh's chunk_listed_grads_kernel runs the listed items beside this walk.
// Scores of pairs outside the causal mask can overflow; they are zeroed by selects, never
// multiplied.
//
// (primes: without the diagonal pair.) As in the forward, the diagonal blocks — the
// weakest decays, the largest terms — carry the residual of each operand's bf16
// rounding: dA·k̄, dAᵀ·q̄, the scores k̄·q̄ᵀ and Aᵀ·do take hi·hi + lo·hi + hi·lo there.
// With single operands on the diagonal, bf16 dg reached 9.7e-3 on gla_t65 (limit 1e-2).
// dq's and dk's blocks off the diagonal take them too (dA·k̆, dAᵀ·q̄): a pair's error
// there enters dg's suffix through q ⊙ dq and k ⊙ dk rounded differently, and does not
// cancel (bench/bf16_dg_error_model.py). The masked blocks are skipped, so each warp
// runs three products a block on the 5 blocks its dq and dk take together.
// dv's k̂·dS_n takes k̂ as hi + lo too (dv 2.47 → 2.20e-3 under mild gates, fla 2.41e-3);
// Aᵀ's blocks two or more sub-chunks on take (k̄_hi + k̄_lo)·2^{…} rounded once, in
// registers.
//
// Warps: warp w takes the 16 rows of sub-chunk mt (tokens for dq and dg, keys for dk and
// dv) and 64 of the 128 columns (`half`). The two warps of a sub-chunk both compute its
// score tiles (dA, dAᵀ, Aᵀ), which keeps the scores in registers. The three products read
// only shared memory that no warp writes, so they need no barrier; dg's scans run on the
// fragments, with one exchange of column sums.
#pragma once

#include "backward_wmma.cuh"
#include "bf16_mma/layout.cuh"
#include "bf16_mma/stage1_decay_cumsum.cuh"
#include "bf16_mma/stage2_prepare_qg_kg.cuh"

namespace glabench::chunked::walk {

struct grad_args {
  const bf16* d_o;
  bf16 *dq, *dk, *dv, *dg;
  const float *states, *dstates;  // [B·H][NT+1][Kp][Vp] ×2 (Y_n: state_operands_and_y)
  int Kp, Vp;
  const unsigned char* listed;  // [B·H·NT]: chunk bh·NT + n's grads_listing code
};

// The fp32 states S_n and dS_n [Kp][Vp] (rows past Kp zero) as 128 × 128 bf16 operand
// tiles, and Y_n = Σ_v S_n ⊙ dS_n in fp32 into `y` [KP]. Thread i of a pass takes row
// warp + 8·it, columns 4·lane …: each state's 16 loads are all in flight before it converts
// any, and the warp sums its 16 rows' products by sum_rows.
__device__ __forceinline__ void state_operands_and_y(unsigned char* smem, uint32_t s_dst,
                                                     uint32_t ds_dst, uint32_t y, const float* s,
                                                     const float* ds, int Kp, int Vp) {
  constexpr int kLoads = KP * KP / 4 / THREADS;
  static_assert(kLoads == SUB, "a warp's rows, one sum_rows");
  float4 x[kLoads], sv[kLoads];
  float prod[kLoads];
  auto load = [&](const float* src) {
#pragma unroll
    for (int it = 0; it < kLoads; ++it) {
      const int i = threadIdx.x + it * THREADS, f = i >> 5, c4 = (i & 31) << 2;
      x[it] = f < Kp
                  ? __ldg(reinterpret_cast<const float4*>(src + static_cast<int64_t>(f) * Vp + c4))
                  : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  auto store = [&](uint32_t dst) {
#pragma unroll
    for (int it = 0; it < kLoads; ++it) {
      const int i = threadIdx.x + it * THREADS, f = i >> 5, c4 = (i & 31) << 2;
      at<uint2>(smem, dst + tc::swizzle<KROW>(f, c4 >> 3) + ((c4 & 7) << 1)) =
          make_uint2(tc::pack_bf16(x[it].x, x[it].y), tc::pack_bf16(x[it].z, x[it].w));
    }
  };
  load(s);
  store(s_dst);
#pragma unroll
  for (int it = 0; it < kLoads; ++it) sv[it] = x[it];  // S's values, kept for Y
  load(ds);
  store(ds_dst);
#pragma unroll
  for (int it = 0; it < kLoads; ++it)
    prod[it] = fmaf(sv[it].x, x[it].x,
                    fmaf(sv[it].y, x[it].y, fmaf(sv[it].z, x[it].z, sv[it].w * x[it].w)));
  const int lane = threadIdx.x & 31;
  const float total = sum_rows(prod, lane);
  if (!(lane & 1))
    at<float>(smem, y + 4 * ((threadIdx.x >> 5) + (THREADS / 32) * ((lane >> 1) & 15))) = total;
}

// The warps run one code path, with their row sub-chunk mt a runtime value: every score
// block is computed and the ones outside the triangle masked to zero, and the diagonal
// block is picked out by selects, never by branching around mma.sync. Four paths, one per
// mt, measured 60 % of the warps' stalls waiting on instruction fetch (H100): the four
// code regions, 250 KB together, did not share the instruction cache.

// Zeroes the elements of a 16-row strip's score tiles outside the causal mask: block m
// (tiles 2m, 2m+1) is kept whole where after(m) says so, kept on the diagonal block
// (m = mt) where on_diagonal(row, col) does, zeroed elsewhere.
template <class After, class Diag>
__device__ __forceinline__ void mask_scores(float (&X)[8][4], int mt, int lane, After after,
                                            Diag on_diagonal) {
#pragma unroll
  for (int jt = 0; jt < 8; ++jt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int m = jt >> 1, row = (lane >> 2) + 8 * (e >> 1),
                col = 8 * (jt & 1) + 2 * (lane & 3) + (e & 1);
      const bool keep = m == mt ? on_diagonal(row, col) : after(m);
      X[jt][e] = keep ? X[jt][e] : 0.f;
    }
}

// Block m's two tiles (2m, 2m+1), m a runtime value (the diagonal block mt, or any other),
// by selects.
__device__ __forceinline__ void block_tiles(const float (&X)[8][4], int m, float (&d)[2][4]) {
#pragma unroll
  for (int e = 0; e < 4; ++e) d[0][e] = d[1][e] = 0.f;
#pragma unroll
  for (int i = 0; i < SUBS; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      d[0][e] = i == m ? X[2 * i][e] : d[0][e];
      d[1][e] = i == m ? X[2 * i + 1][e] : d[1][e];
    }
}

// dA[t][t] for the lane's rows (lane/4 and lane/4 + 8), from the diagonal tiles.
__device__ __forceinline__ float2 diagonal_of(const float (&d)[2][4], int lane) {
  const int r = lane >> 2, src = 4 * r + (r >> 1);
  const float lo = (r & 1) ? d[0][1] : d[0][0];
  const float hi = (r & 1) ? d[1][3] : d[1][2];
  return make_float2(__shfl_sync(0xffffffffu, lo, src), __shfl_sync(0xffffffffu, hi, src));
}

// Two m16n8 accumulator tiles as the bf16 A fragment of a 16×16 operand, and the
// fragment of what that rounding left out.
__device__ __forceinline__ void a_fragment(const float (&x0)[4], const float (&x1)[4],
                                           uint32_t (&a)[4]) {
  a[0] = tc::pack_bf16(x0[0], x0[1]);
  a[1] = tc::pack_bf16(x0[2], x0[3]);
  a[2] = tc::pack_bf16(x1[0], x1[1]);
  a[3] = tc::pack_bf16(x1[2], x1[3]);
}
__device__ __forceinline__ void a_fragments(const float (&x0)[4], const float (&x1)[4],
                                            uint32_t (&a)[4], uint32_t (&a_lo)[4]) {
  tc::split_bf16(x0[0], x0[1], a[0], a_lo[0]);
  tc::split_bf16(x0[2], x0[3], a[1], a_lo[1]);
  tc::split_bf16(x1[0], x1[1], a[2], a_lo[2]);
  tc::split_bf16(x1[2], x1[3], a[3], a_lo[3]);
}

// X[jn] (+)= A·B over the warp's 64 columns: B's 16-row block kb of the 128-column tile
// at `tile`, stored [k][n] (transposing ldmatrix).
__device__ __forceinline__ void mma_cols(float (&X)[8][4], const uint32_t (&a)[4], uint32_t tile,
                                         int kb, int half, int lane) {
#pragma unroll
  for (int np = 0; np < 4; ++np) {
    uint32_t b[4];
    tc::ldsm_x4_trans(b, tile + frag_bt(16 * kb, 64 * half + 16 * np, lane));
    tc::mma(X[2 * np], a, b[0], b[1]);
    tc::mma(X[2 * np + 1], a, b[2], b[3]);
  }
}
// The same with B stored [n][k] (the states, whose rows are the output's columns).
__device__ __forceinline__ void mma_cols_nk(float (&X)[8][4], const uint32_t (&a)[4], uint32_t tile,
                                            int kb, int half, int lane) {
#pragma unroll
  for (int np = 0; np < 4; ++np) {
    uint32_t b[4];
    tc::ldsm_x4(b, tile + frag_b(64 * half + 16 * np, 16 * kb, lane));
    tc::mma(X[2 * np], a, b[0], b[1]);
    tc::mma(X[2 * np + 1], a, b[2], b[3]);
  }
}
// Scores of the warp's 16 rows against all four key blocks: X[2m], X[2m+1] += A·Bᵀ with
// B's rows 16m … stored [n][k].
__device__ __forceinline__ void mma_scores(float (&X)[8][4], const uint32_t (&a)[4], uint32_t tile,
                                           int kb, int lane) {
#pragma unroll
  for (int m = 0; m < SUBS; ++m) {
    uint32_t b[4];
    tc::ldsm_x4(b, tile + frag_b(16 * m, 16 * kb, lane));
    tc::mma(X[2 * m], a, b[0], b[1]);
    tc::mma(X[2 * m + 1], a, b[2], b[3]);
  }
}

// X += the 16-row strip mt of tile A against every row of tile B (scores of four key
// blocks), over the tiles' 128 columns: both stored [row][k].
__device__ __forceinline__ void mma_strip(float (&X)[8][4], uint32_t a_tile, uint32_t b_tile,
                                          int mt, int lane) {
#pragma unroll 2
  for (int kb = 0; kb < KP / 16; ++kb) {
    uint32_t a[4];
    tc::ldsm_x4(a, a_tile + frag_a(16 * mt, 16 * kb, lane));
    mma_scores(X, a, b_tile, kb, lane);
  }
}

__device__ __forceinline__ void scale_tiles(float (&X)[8][4], float s) {
#pragma unroll
  for (int jt = 0; jt < 8; ++jt)
#pragma unroll
    for (int e = 0; e < 4; ++e) X[jt][e] *= s;
}

// X[·][col] *= 2^{T_m}[col] over the warp's 64 columns: a sum of products moved from the
// reference Γ_m to Γ_{m+1} (or, for the keys, from Γ_{m+1} to Γ_m).
__device__ __forceinline__ void decay_columns(float (&X)[8][4], const unsigned char* smem, int m,
                                              int half, int lane) {
  const float* e = reinterpret_cast<const float*>(smem + grads_layout::etots) + m * KP;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const float2 f = *reinterpret_cast<const float2*>(e + 64 * half + 8 * jn + ((lane & 3) << 1));
    X[jn][0] *= f.x, X[jn][1] *= f.y, X[jn][2] *= f.x, X[jn][3] *= f.y;
  }
}

// An A fragment of (hi + lo)·2^{e} and its residual: e per feature, e_lo for the
// fragment's first column pair and e_hi for its second (columns +8). A caller that drops
// a_lo takes the fragment rounded once.
__device__ __forceinline__ void decayed_fragments(const uint32_t (&hi)[4], const uint32_t (&lo)[4],
                                                  float2 e_lo, float2 e_hi, uint32_t (&a)[4],
                                                  uint32_t (&a_lo)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 h = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&hi[i]));
    const float2 l = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&lo[i]));
    const float2 e = i < 2 ? e_lo : e_hi;
    tc::split_bf16((h.x + l.x) * e.x, (h.y + l.y) * e.y, a[i], a_lo[i]);
  }
}
// Block m (a runtime value) of the scores S as the bf16 A fragment of a 16×16 operand
// and its residual.
__device__ __forceinline__ void block_fragments(const float (&S)[8][4], int m, uint32_t (&a)[4],
                                                uint32_t (&a_lo)[4]) {
  float x[2][4];
  block_tiles(S, m, x);
  a_fragments(x[0], x[1], a, a_lo);
}

// D += S·B over block m of scores S, with both operands' residuals: S_hi·B_hi + S_lo·B_hi
// + S_hi·B_lo (B's rows 16m …, stored [k][n]: hi and its residual lo).
__device__ __forceinline__ void mma_block_split(float (&D)[8][4], const float (&S)[8][4], int m,
                                                uint32_t hi, uint32_t lo, int half, int lane) {
  uint32_t a[4], a_lo[4];
  block_fragments(S, m, a, a_lo);
  mma_cols(D, a, hi, m, half, lane);
  mma_cols(D, a_lo, hi, m, half, lane);
  mma_cols(D, a, lo, m, half, lane);
}

// The same for keys k̄·2^{T_m} (decayed to their sub-chunk's end, k̆) where `decayed`, k̄
// otherwise: (k̄_hi + k̄_lo)·2^{T_m} split into hi + lo in registers as B fragments.
// Register i of a transposing ldmatrix holds two keys of feature n0 + 8·(i/2) + lane/4.
__device__ __forceinline__ void mma_block_split_keys(float (&D)[8][4], const float (&S)[8][4],
                                                     const unsigned char* smem, uint32_t kbar,
                                                     uint32_t kbar_lo, int m, bool decayed,
                                                     int half, int lane) {
  uint32_t a[4], a_lo[4];
  block_fragments(S, m, a, a_lo);
  const float* e = reinterpret_cast<const float*>(smem + grads_layout::etots) + m * KP;
#pragma unroll
  for (int np = 0; np < 4; ++np) {
    const int n0 = 64 * half + 16 * np;
    uint32_t h[4], l[4], b[4], b_lo[4];
    tc::ldsm_x4_trans(h, kbar + frag_bt(16 * m, n0, lane));
    tc::ldsm_x4_trans(l, kbar_lo + frag_bt(16 * m, n0, lane));
    const float f0 = decayed ? e[n0 + (lane >> 2)] : 1.f;
    const float f1 = decayed ? e[n0 + 8 + (lane >> 2)] : 1.f;
    decayed_fragments(h, l, make_float2(f0, f0), make_float2(f1, f1), b, b_lo);
    tc::mma(D[2 * np], a, b[0], b[1]);
    tc::mma(D[2 * np + 1], a, b[2], b[3]);
    tc::mma(D[2 * np], a_lo, b[0], b[1]);
    tc::mma(D[2 * np + 1], a_lo, b[2], b[3]);
    tc::mma(D[2 * np], a, b_lo[0], b_lo[1]);
    tc::mma(D[2 * np + 1], a, b_lo[2], b_lo[3]);
  }
}

// D += S·B for scores S masked to the triangle, walking the key blocks forward (dq): block
// m < mt reads k̆ (reference Γ_{m+1}), D moving from Γ_m to Γ_{m+1} before it; the
// diagonal block reads k̄ (reference Γ_mt). Every block takes both operands' residuals.
// The loops are rolled, their trip counts uniform over the warp: the masked blocks are
// skipped, and the warps of every mt share one copy of the code (see above).
__device__ __forceinline__ void mma_blocks_forward(float (&D)[8][4], const float (&S)[8][4],
                                                   const unsigned char* smem, int mt, uint32_t kbar,
                                                   uint32_t kbar_lo, int half, int lane) {
#pragma unroll 1
  for (int m = 0; m <= mt; ++m) {
    if (m < mt) decay_columns(D, smem, m, half, lane);
    mma_block_split_keys(D, S, smem, kbar, kbar_lo, m, m < mt, half, lane);
  }
}

// The same walking the blocks backward (dk): every block m ≥ mt reads q̄ (reference Γ_m)
// and its residual, D moving from Γ_{m+1} to Γ_m before each.
__device__ __forceinline__ void mma_blocks_backward(float (&D)[8][4], const float (&S)[8][4],
                                                    const unsigned char* smem, int mt, uint32_t hi,
                                                    uint32_t lo, int half, int lane) {
#pragma unroll 1
  for (int m = SUBS - 1; m >= mt; --m) {
    if (m < SUBS - 1) decay_columns(D, smem, m, half, lane);
    mma_block_split(D, S, m, hi, lo, half, lane);
  }
}

// 2^{Γ_m − Γ_mt} for the two features at column f.
__device__ __forceinline__ float2 gate_between(const unsigned char* smem, int mt, int m, int f) {
  const float* gam = reinterpret_cast<const float*>(smem + grads_layout::gam);
  const float2 to = *reinterpret_cast<const float2*>(gam + m * KP + f);
  const float2 from = *reinterpret_cast<const float2*>(gam + mt * KP + f);
  return make_float2(tc::ex2(to.x - from.x), tc::ex2(to.y - from.y));
}

// What one element pair (row t of the chunk, columns f, f+1) of the warp's fragments
// reads: l, the gates from its sub-chunk's start, and q̄ and k̄ as their bf16 roundings
// plus residuals (q = q̄·2^{−l} to 2^-16).
struct element {
  float2 l, qb, kb;
  __device__ element(const unsigned char* smem, int t, int f) {
    using L = grads_layout;
    const uint32_t off = pair_offset(t, f >> 1);
    l = *reinterpret_cast<const float2*>(smem + L::l + (t * L::GLD + f) * 4);
    const float2 qh = pair_at(smem, L::qbar + off), ql = pair_at(smem, L::qbar_lo + off);
    const float2 kh = pair_at(smem, L::kbar + off), kl = pair_at(smem, L::kbar_lo + off);
    qb = make_float2(qh.x + ql.x, qh.y + ql.y), kb = make_float2(kh.x + kl.x, kh.y + kl.y);
  }
};

// f(jn, h, t, col, x) for each element pair of the warp's 16 × 64 fragments: tile jn,
// row half h, row t of the chunk, first column col, and what the pair reads.
template <class F>
__device__ __forceinline__ void each_element(const unsigned char* smem, int row0, int half,
                                             int lane, F f) {
  const int c2 = (lane & 3) << 1;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = row0 + 8 * h, col = 64 * half + 8 * jn + c2;
      f(jn, h, t, col, element(smem, t, col));
    }
}

struct grads_out {
  bf16* base;
  int64_t stride;
  int64_t rows;  // valid rows from the chunk's start
  int cols;
  __device__ void store(int r, int c, float x, float y) const {
    if (r < rows && c < cols)
      *reinterpret_cast<uint32_t*>(base + r * stride + c) = tc::pack_bf16(x, y);
  }
  __device__ void store_one(int r, int c, float x) const {
    if (r < rows && c < cols) base[r * stride + c] = __float2bfloat16_rn(x);
  }
};

// The chunk's q and k in global memory (bf16, rows from the chunk's first token).
struct chunk_rows {
  const bf16 *q, *k;
  int64_t stride, rows;  // elements between tokens; valid rows
  // Element (t, f) of q or k; 0 past the sequence's end.
  __device__ float at(const bf16* x, int t, int f) const {
    return t < rows ? __bfloat162float(x[t * stride + f]) : 0.f;
  }
};

// dv's terms from the strong features of sub-chunk mt, whose k̄ walk_prepare_grads zeroed,
// for the warp's keys j (rows lane/4 and lane/4 + 8 of the sub-chunk): into the scaled,
// masked scores Aᵀ, s·k[j]·q[t]·2^{x} for t ≥ j in block mt and every t of the blocks
// from mt + 2 (block mt + 1 reads k̆, which a strong feature keeps); into D, k̂[j]·dS_n with
// k̂ = k·2^{x}. Every x ≤ 0: l[t] − l[j] inside the sub-chunk, else
// (Γ_m − Γ_{mt+1}) + (T_mt − l[j]) + l[t] (l[t] = 0, Γ_4 for k̂) — differences inside one
// sub-chunk or of the gates before sub-chunks, as the forward's k̂ pass and gate_between
// take them. q and k come from global memory: their tiles hold residuals by now. Strong
// features are rare (about 1 in 12 000 sub-chunk features under −exp(N(−0.5, 1)) gates), so
// the loop over them stays rolled.
__device__ __forceinline__ void add_strong_features(const unsigned char* smem, const chunk_rows& x,
                                                    int mt, int lane, int half, float scale,
                                                    float (&At)[8][4], float (&D)[8][4]) {
  using L = grads_layout;
  const unsigned* bits = reinterpret_cast<const unsigned*>(smem + L::strong) + mt * (KP / 32);
  const float* l = reinterpret_cast<const float*>(smem + L::l);
  const float* tots = reinterpret_cast<const float*>(smem + L::tots);
  const float* gam = reinterpret_cast<const float*>(smem + L::gam);
  const int r = lane >> 2, c2 = (lane & 3) << 1;
#pragma unroll 1
  for (int wd = 0; wd < KP / 32; ++wd) {
#pragma unroll 1
    for (unsigned b = bits[wd]; b; b &= b - 1) {
      const int f = 32 * wd + __ffs(b) - 1;
      const float T = tots[mt * KP + f], ref = gam[(mt + 1) * KP + f];
      float kj[2], lj[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int j = SUB * mt + r + 8 * h;
        kj[h] = x.at(x.k, j, f), lj[h] = l[j * L::GLD + f];
      }
      // Rolled over the score tiles, each tile's four terms added by selects: the code stays
      // small, so the rare chunk that runs it fetches few instructions.
#pragma unroll 1
      for (int jt = 2 * mt; jt < 8; ++jt) {
        const int m = jt >> 1;
        if (m == mt + 1) continue;
        float add[4];
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int t = 8 * jt + c2 + c;
          const float qt = scale * x.at(x.q, t, f), lt = l[t * L::GLD + f];
          const float far = (gam[m * KP + f] - ref) + lt;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const float e = m == mt ? lt - lj[h] : far + (T - lj[h]);
            add[2 * h + c] = m > mt || t >= SUB * mt + r + 8 * h ? kj[h] * qt * tc::ex2(e) : 0.f;
          }
        }
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) At[i][e] += i == jt ? add[e] : 0.f;
      }
      const float to_end = gam[SUBS * KP + f] - ref;
      const float kh[2] = {kj[0] * tc::ex2(to_end + (T - lj[0])),
                           kj[1] * tc::ex2(to_end + (T - lj[1]))};
#pragma unroll
      for (int jn = 0; jn < 8; ++jn) {
        const float2 ds = pair_at(smem, L::ds + tc::swizzle_elem<KROW>(f, 64 * half + 8 * jn + c2));
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          D[jn][2 * h] = fmaf(kh[h], ds.x, D[jn][2 * h]);
          D[jn][2 * h + 1] = fmaf(kh[h], ds.y, D[jn][2 * h + 1]);
        }
      }
    }
  }
}

// The warp's gradients for sub-chunk mt: dv, dq and dk stored, and dg's two parts left in
// Tg (q ⊙ dq' − k ⊙ dk'_intra) and Pg (k ⊙ dk_inter) for walk_grad_dg. dv comes first,
// while Tg and Pg hold no registers.
__device__ __forceinline__ void walk_grad_rows(const unsigned char* smem, uint32_t sm, int mt,
                                               int lane, int half, float scale, const chunk_rows& x,
                                               const grads_out& dq, const grads_out& dk,
                                               const grads_out& dv, float (&Tg)[8][4],
                                               float (&Pg)[8][4]) {
  using L = grads_layout;
  const int r = lane >> 2, c2 = (lane & 3) << 1, row0 = 16 * mt + r;
  // ---- dv: the scores Aᵀ (keys j of sub-chunk mt, rows t ≥ j) and k̂·dS_n, then + Aᵀ·do --
  //   block mt:     k̄·q̄ᵀ with both residuals (reference Γ_mt);
  //   block mt + 1: k̆·q̄ᵀ (reference Γ_{mt+1});
  //   blocks after: ((k̄_hi + k̄_lo)·2^{Γ_m − Γ_mt})·q̄ᵀ, rounded once;
  //   k̂ = (k̄_hi + k̄_lo)·2^{G[C−1] − Γ_mt}, rounded once.
  {
    float At[8][4] = {}, D[8][4] = {}, Ad[2][4] = {};
#pragma unroll 2
    for (int kb = 0; kb < KP / 16; ++kb) {
      uint32_t kh[4], kl[4], ke[4], b[4];
      tc::ldsm_x4(kh, sm + L::kbar + frag_a(16 * mt, 16 * kb, lane));
      tc::ldsm_x4(kl, sm + L::kbar_lo + frag_a(16 * mt, 16 * kb, lane));
      tc::ldsm_x4(ke, sm + L::kend + frag_a(16 * mt, 16 * kb, lane));
      tc::ldsm_x4(b, sm + L::qbar + frag_b(16 * mt, 16 * kb, lane));
      tc::mma(Ad[0], kh, b[0], b[1]);
      tc::mma(Ad[1], kh, b[2], b[3]);
      tc::mma(Ad[0], kl, b[0], b[1]);
      tc::mma(Ad[1], kl, b[2], b[3]);
      tc::ldsm_x4(b, sm + L::qbar_lo + frag_b(16 * mt, 16 * kb, lane));
      tc::mma(Ad[0], kh, b[0], b[1]);
      tc::mma(Ad[1], kh, b[2], b[3]);
      const int f = 16 * kb + c2;
#pragma unroll
      for (int m = 0; m < SUBS; ++m) {
        uint32_t a[4];
        if (m < 2) {
          // m = mt + 1 or masked (m ≤ mt)
#pragma unroll
          for (int i = 0; i < 4; ++i) a[i] = ke[i];
        } else {
          uint32_t unused[4];
          decayed_fragments(kh, kl, gate_between(smem, mt, m, f), gate_between(smem, mt, m, f + 8),
                            a, unused);
#pragma unroll
          for (int i = 0; i < 4; ++i) a[i] = m == mt + 1 ? ke[i] : a[i];
        }
        tc::ldsm_x4(b, sm + L::qbar + frag_b(16 * m, 16 * kb, lane));
        tc::mma(At[2 * m], a, b[0], b[1]);
        tc::mma(At[2 * m + 1], a, b[2], b[3]);
      }
      uint32_t a[4], a_lo[4];
      decayed_fragments(kh, kl, gate_between(smem, mt, SUBS, f),
                        gate_between(smem, mt, SUBS, f + 8), a, a_lo);
      mma_cols(D, a, sm + L::ds, kb, half, lane);
      mma_cols(D, a_lo, sm + L::ds, kb, half, lane);
    }
#pragma unroll
    for (int m = 0; m < SUBS; ++m)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        At[2 * m][e] = m == mt ? Ad[0][e] : At[2 * m][e];
        At[2 * m + 1][e] = m == mt ? Ad[1][e] : At[2 * m + 1][e];
      }
    scale_tiles(At, scale);
    mask_scores(
        At, mt, lane, [mt](int m) { return m > mt; }, [](int j, int t) { return t >= j; });
    const uint4 strong = *reinterpret_cast<const uint4*>(smem + L::strong + mt * KP / 8);
    if (__builtin_expect((strong.x | strong.y | strong.z | strong.w) != 0u, 0)) {
      add_strong_features(smem, x, mt, lane, half, scale, At, D);
    }
    // Aᵀ·do with the diagonal's residual on the scores only (do is exact)
#pragma unroll
    for (int m = 0; m < SUBS; ++m) {
      uint32_t a[4];
      a_fragment(At[2 * m], At[2 * m + 1], a);
      mma_cols(D, a, sm + L::d_o, m, half, lane);
    }
    {
      float d[2][4];
      block_tiles(At, mt, d);
      uint32_t a[4], a_lo[4];
      a_fragments(d[0], d[1], a, a_lo);
      mma_cols(D, a_lo, sm + L::d_o, mt, half, lane);
    }
#pragma unroll
    for (int jn = 0; jn < 8; ++jn)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        dv.store(row0 + 8 * h, 64 * half + 8 * jn + c2, D[jn][2 * h], D[jn][2 * h + 1]);
  }
  // ---- dq: dA = s·do·vᵀ (keys up to the rows) and s·do·S_nᵀ, then the key blocks -------
  //   D = s·do·S_nᵀ at reference Γ_0 = 0, moved block by block to Γ_mt;
  //   dq = 2^{l} ⊙ (D + dA[t][t]·k̄[t]),  q ⊙ dq' = q̄ ⊙ D
  float2 diag;
  {
    float dA[8][4] = {}, D[8][4] = {};
#pragma unroll 2
    for (int kb = 0; kb < KP / 16; ++kb) {
      uint32_t a[4];
      tc::ldsm_x4(a, sm + L::d_o + frag_a(16 * mt, 16 * kb, lane));
      mma_scores(dA, a, sm + L::v, kb, lane);
      mma_cols_nk(D, a, sm + L::s, kb, half, lane);
    }
    scale_tiles(dA, scale);
    scale_tiles(D, scale);
    {
      float d[2][4];
      block_tiles(dA, mt, d);
      diag = diagonal_of(d, lane);
    }
    mask_scores(
        dA, mt, lane, [mt](int m) { return m < mt; }, [](int t, int j) { return j < t; });
    mma_blocks_forward(D, dA, smem, mt, sm + L::kbar, sm + L::kbar_lo, half, lane);
    each_element(smem, row0, half, lane, [&](int jn, int h, int t, int f, const element& x) {
      const float dd = h ? diag.y : diag.x, d0 = D[jn][2 * h], d1 = D[jn][2 * h + 1];
      dq.store(t, f, tc::ex2(x.l.x) * fmaf(dd, x.kb.x, d0), tc::ex2(x.l.y) * fmaf(dd, x.kb.y, d1));
      Tg[jn][2 * h] = x.qb.x * d0, Tg[jn][2 * h + 1] = x.qb.y * d1;
    });
  }
  // ---- dk: dAᵀ = s·v·doᵀ (rows after the keys), the row blocks, then v·dS_nᵀ -------------
  //   Kr at reference Γ_mt, moved block by block from the chunk's end;
  //   dk = 2^{−l} ⊙ (Kr + dA[j][j]·q̄[j]) + 2^{G[C−1] − Γ_mt − l} ⊙ Ki,  k ⊙ dk'_intra = k̄ ⊙ Kr
  {
    float Ki[8][4] = {}, Kr[8][4] = {};
    {
      float dAt[8][4] = {};
      mma_strip(dAt, sm + L::v, sm + L::d_o, mt, lane);
      scale_tiles(dAt, scale);
      mask_scores(
          dAt, mt, lane, [mt](int m) { return m > mt; }, [](int j, int t) { return t > j; });
      mma_blocks_backward(Kr, dAt, smem, mt, sm + L::qbar, sm + L::qbar_lo, half, lane);
    }
#pragma unroll 2
    for (int kb = 0; kb < KP / 16; ++kb) {
      uint32_t a[4];
      tc::ldsm_x4(a, sm + L::v + frag_a(16 * mt, 16 * kb, lane));
      mma_cols_nk(Ki, a, sm + L::ds, kb, half, lane);
    }
    const float* gam = reinterpret_cast<const float*>(smem + L::gam);
    each_element(smem, row0, half, lane, [&](int jn, int h, int t, int f, const element& x) {
      const float2 end = *reinterpret_cast<const float2*>(gam + SUBS * KP + f);
      const float2 start = *reinterpret_cast<const float2*>(gam + mt * KP + f);
      const float i0 = tc::ex2((end.x - start.x) - x.l.x) * Ki[jn][2 * h];
      const float i1 = tc::ex2((end.y - start.y) - x.l.y) * Ki[jn][2 * h + 1];
      const float dd = h ? diag.y : diag.x, r0 = Kr[jn][2 * h], r1 = Kr[jn][2 * h + 1];
      dk.store(t, f, fmaf(tc::ex2(-x.l.x), fmaf(dd, x.qb.x, r0), i0),
               fmaf(tc::ex2(-x.l.y), fmaf(dd, x.qb.y, r1), i1));
      Pg[jn][2 * h] = x.kb.x * tc::ex2(x.l.x) * i0;
      Pg[jn][2 * h + 1] = x.kb.y * tc::ex2(x.l.y) * i1;
      Tg[jn][2 * h] -= x.kb.x * r0, Tg[jn][2 * h + 1] -= x.kb.y * r1;
    });
  }
}

// dg from the warp's parts: Σ_{r≥t} Tg_r + Σ_{r<t} Pg_r + 2^{G[C−1]} ⊙ Y_n. The scans run
// over the fragment's rows (lane/4, and +8) by shuffles; each warp's 16-row column sums
// pass to the other sub-chunks through shared memory. Every sum has a fixed order.
__device__ __forceinline__ void walk_grad_dg(unsigned char* smem, int mt, int lane, int half,
                                             const grads_out& dg, float (&Tg)[8][4],
                                             const float (&Pg)[8][4]) {
  using L = grads_layout;
  const unsigned all = 0xffffffffu;
  const int r = lane >> 2, c = lane & 3, c2 = c << 1;
  float* colsum = reinterpret_cast<float*>(smem + L::colsum);  // [T, P][SUBS][KP]
#pragma unroll
  for (int jn = 0; jn < 8; ++jn)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float sa = Tg[jn][e], sb = Tg[jn][2 + e], pa = Pg[jn][e], pb = Pg[jn][2 + e];
#pragma unroll
      for (int off = 1; off < 8; off <<= 1) {  // suffix sums of T, inclusive prefix sums of P
        const float za = __shfl_down_sync(all, sa, 4 * off),
                    zb = __shfl_down_sync(all, sb, 4 * off);
        const float ya = __shfl_up_sync(all, pa, 4 * off), yb = __shfl_up_sync(all, pb, 4 * off);
        if (r + off < 8) sa += za, sb += zb;
        if (r >= off) pa += ya, pb += yb;
      }
      sa += __shfl_sync(all, sb, c);  // rows r … 7, then 8 … 15
      const float ta = __shfl_sync(all, pa, 28 + c);
      pb += ta;
      float ea = __shfl_up_sync(all, pa, 4), eb = __shfl_up_sync(all, pb, 4);
      if (r == 0) ea = 0.f, eb = ta;
      const float col_t = __shfl_sync(all, sa, c), col_p = __shfl_sync(all, pb, 28 + c);
      const int f = 64 * half + 8 * jn + c2 + e;
      if (r == 0) colsum[mt * KP + f] = col_t, colsum[(SUBS + mt) * KP + f] = col_p;
      Tg[jn][e] = sa + ea, Tg[jn][2 + e] = sb + eb;
    }
  __syncthreads();
  const float* y = reinterpret_cast<const float*>(smem + L::y);
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const int f = 64 * half + 8 * jn + c2;
    float add[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float later = 0.f, earlier = 0.f;
#pragma unroll
      for (int m = 0; m < SUBS; ++m) {
        if (m > mt) later += colsum[m * KP + f + e];
        if (m < mt) earlier += colsum[(SUBS + m) * KP + f + e];
      }
      const float end = at<float>(smem, L::gam + (SUBS * KP + f + e) * 4);  // G[C−1]
      add[e] = (later + earlier) + tc::ex2(end) * y[f + e];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h)
      dg.store(16 * mt + r + 8 * h, f, Tg[jn][2 * h] + add[0], Tg[jn][2 * h + 1] + add[1]);
  }
}

// ---- strong features: their dq, dk and dg again, pair by pair -----------------------
// x(t, j) ≤ 0 below is the log2 decay from key j to row t ≥ j of the chunk as a sum of
// gates: l[t] − l[j] inside one sub-chunk, else (Γ_m − Γ_{mj+1}) + (T_mj − l[j]) + l[t] for
// t in sub-chunk m and j in mj (add_strong_features' exponents).
// A feature whose gates over a sub-chunk sum below −kSafeLog2 (walk_prepare_grads's
// `strong` bits) has k̄ = 0 in the walk, whose dq, dk and dg of that column are then
// incomplete. Where its half of K was not left to the WMMA bodies (`listing`: at most
// kRewriteMost strong features in the half, strong_features.hpp), the block writes that
// column's dq, dk and dg again after the walk, for every row of the chunk, as the recurrence
// defines them, each pair's decay 2^{x(t, j)} (above):
//   dq_t = s·2^{G_t}·do_t·S_nᵀ + Σ_{j≤t} dA[t][j]·k_j·2^{x(t, j)}
//   dk_j = Σ_{t≥j} dA[t][j]·q_t·2^{x(t, j)} + 2^{G[C−1] − G_j}·v_j·dS_nᵀ
//   dg_t = Σ_{r≥t} (q ⊙ dq' − k ⊙ dk'_intra)_r + Σ_{r<t} (k ⊙ dk_inter)_r + 2^{G[C−1]}·Y_n
// (primes: without the pair j = t), G_t = Γ_m + l[t], dA = s·do·vᵀ in fp32 (on the tensor
// cores, into the operand tiles the walk is done with), S_n and dS_n the walk's bf16
// operands, q and k from global memory. One feature at a time on the whole block: thread
// (row t, quarter c) sums the pairs j ≡ c (mod 4) and a quarter of each dot product, the
// quad adds them up; warp 0 scans dg. These stores follow the walk's past a barrier, so
// they are the ones that stay.
__device__ void rewrite_strong_features(unsigned char* smem, uint32_t sm, const chunk_rows& x,
                                        float scale, unsigned listing, const grads_out& dq,
                                        const grads_out& dk, const grads_out& dg) {
  using L = grads_layout;
  constexpr int kLd = C + 1;  // dA's rows: kLd floats, few bank conflicts
  const unsigned* bits = reinterpret_cast<const unsigned*>(smem + L::strong);  // [SUBS][KP / 32]
  static_assert(KP / 32 == 4, "four words of features");
  unsigned mine[KP / 32];  // the strong features this block rewrites: not in a listed half
#pragma unroll
  for (int wd = 0; wd < KP / 32; ++wd) {
    mine[wd] = 0u;
#pragma unroll
    for (int m = 0; m < SUBS; ++m) mine[wd] |= bits[m * (KP / 32) + wd];
    if (listing & (grads_listing::kSlab0 << (wd / 2))) mine[wd] = 0u;
  }
  if (!(mine[0] | mine[1] | mine[2] | mine[3])) return;  // the block's bits: uniform
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  __syncthreads();  // the walk is done with q̄'s, k̄'s and k̆'s tiles
  float* dA = reinterpret_cast<float*>(smem + L::qbar);  // [C][kLd], over q̄'s and k̄'s tiles
  static_assert(L::kbar == L::qbar + L::tile && C * kLd * 4 <= 2 * L::tile);
  {
    const int mt = warp >> 1, half = warp & 1;  // rows of sub-chunk mt, keys of this half
    float X[8][4] = {};
    mma_strip(X, sm + L::d_o, sm + L::v, mt, lane);
#pragma unroll
    for (int jt = 0; jt < 8; ++jt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int t = 16 * mt + (lane >> 2) + 8 * (e >> 1), j = 8 * jt + 2 * (lane & 3) + (e & 1);
        if ((jt >> 2) == half) dA[t * kLd + j] = scale * X[jt][e];
      }
  }
  // The feature's q, k and l down the chunk, then each row's Tg and Pg for dg's scans.
  float* col = reinterpret_cast<float*>(smem + L::kend);
  float *qf = col, *kf = col + C, *lf = col + 2 * C, *tg = col + 3 * C, *pg = col + 4 * C;
  const float* l = reinterpret_cast<const float*>(smem + L::l);
  const float* tots = reinterpret_cast<const float*>(smem + L::tots);
  const float* gam = reinterpret_cast<const float*>(smem + L::gam);
  const float* y = reinterpret_cast<const float*>(smem + L::y);
  const int t = tid >> 2, c = tid & 3, m = t / SUB;
#pragma unroll 1
  for (int wd = 0; wd < KP / 32; ++wd) {
    // (selects, not mine[wd]: a register array indexed by a rolled loop lives in local memory)
    const unsigned word = wd == 0 ? mine[0] : wd == 1 ? mine[1] : wd == 2 ? mine[2] : mine[3];
#pragma unroll 1
    for (unsigned b = word; b; b &= b - 1) {
      const int f = 32 * wd + __ffs(b) - 1;
      __syncthreads();  // dA written; the previous feature's columns read
      if (tid < C) {
        qf[tid] = x.at(x.q, tid, f), kf[tid] = x.at(x.k, tid, f);
        lf[tid] = l[tid * L::GLD + f];
      }
      __syncthreads();
      const float lt = lf[t];
      float sd = 0.f, vd = 0.f;  // quarter c of do_t·S_n[f] and of v_t·dS_n[f]
#pragma unroll 4
      for (int v = 32 * c; v < 32 * c + 32; v += 2) {
        const float2 d = pair_at(smem, L::d_o + tc::swizzle_elem<KROW>(t, v));
        const float2 st = pair_at(smem, L::s + tc::swizzle_elem<KROW>(f, v));
        const float2 vv = pair_at(smem, L::v + tc::swizzle_elem<KROW>(t, v));
        const float2 ds = pair_at(smem, L::ds + tc::swizzle_elem<KROW>(f, v));
        sd = fmaf(d.y, st.y, fmaf(d.x, st.x, sd));
        vd = fmaf(vv.y, ds.y, fmaf(vv.x, ds.x, vd));
      }
      float dqp = 0.f, dkp = 0.f;  // quarter c of the pairs: keys j < t, and rows u > t
#pragma unroll 1
      for (int mj = 0; mj <= m; ++mj) {
        const float between = gam[m * KP + f] - gam[(mj + 1) * KP + f], T = tots[mj * KP + f];
        const int end = mj == m ? t : SUB * (mj + 1);
#pragma unroll 1
        for (int j = SUB * mj + c; j < end; j += 4) {
          const float lj = lf[j];
          const float e = mj == m ? lt - lj : (between + (T - lj)) + lt;
          dqp = fmaf(dA[t * kLd + j] * kf[j], tc::ex2(e), dqp);
        }
      }
#pragma unroll 1
      for (int mu = m; mu < SUBS; ++mu) {
        const float between = gam[mu * KP + f] - gam[(m + 1) * KP + f], T = tots[m * KP + f];
#pragma unroll 1
        for (int u = (mu == m ? t + 1 : SUB * mu) + c; u < SUB * (mu + 1); u += 4) {
          const float lu = lf[u];
          const float e = mu == m ? lu - lt : (between + (T - lt)) + lu;
          dkp = fmaf(dA[u * kLd + t] * qf[u], tc::ex2(e), dkp);
        }
      }
#pragma unroll
      for (int off = 1; off < 4; off <<= 1) {  // the quad's quarters
        sd += __shfl_xor_sync(0xffffffffu, sd, off);
        vd += __shfl_xor_sync(0xffffffffu, vd, off);
        dqp += __shfl_xor_sync(0xffffffffu, dqp, off);
        dkp += __shfl_xor_sync(0xffffffffu, dkp, off);
      }
      if (c == 0) {
        dqp = fmaf(scale * tc::ex2(gam[m * KP + f] + lt), sd, dqp);  // dq' (the pair t, t apart)
        const float inter = tc::ex2((gam[SUBS * KP + f] - gam[m * KP + f]) - lt) * vd;
        const float qt = qf[t], kt = kf[t], dd = dA[t * kLd + t];
        dq.store_one(t, f, fmaf(dd, kt, dqp));
        dk.store_one(t, f, fmaf(dd, qt, dkp) + inter);
        tg[t] = qt * dqp - kt * dkp, pg[t] = kt * inter;
      }
      __syncthreads();  // every row's Tg and Pg
      if (warp == 0) {  // dg: suffix sums of Tg, exclusive prefix sums of Pg (rows lane, +32)
        float s0 = tg[lane], s1 = tg[lane + 32], p0 = pg[lane], p1 = pg[lane + 32];
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const float z0 = __shfl_down_sync(0xffffffffu, s0, off),
                      z1 = __shfl_down_sync(0xffffffffu, s1, off);
          const float y0 = __shfl_up_sync(0xffffffffu, p0, off),
                      y1 = __shfl_up_sync(0xffffffffu, p1, off);
          if (lane + off < 32) s0 += z0, s1 += z1;
          if (lane >= off) p0 += y0, p1 += y1;
        }
        const float upper = __shfl_sync(0xffffffffu, s1, 0),
                    lower = __shfl_sync(0xffffffffu, p0, 31);
        float e0 = __shfl_up_sync(0xffffffffu, p0, 1), e1 = __shfl_up_sync(0xffffffffu, p1, 1);
        if (lane == 0) e0 = 0.f, e1 = 0.f;
        const float end = tc::ex2(gam[SUBS * KP + f]) * y[f];
        dg.store_one(lane, f, (s0 + upper) + e0 + end);
        dg.store_one(lane + 32, f, s1 + (lower + e1) + end);
      }
    }
  }
}

// ---- the kernel: one block per (chunk, head) -----------------------------------------
template <bool kNarrow>
__global__ void __launch_bounds__(THREADS, 1) chunk_walk_grads_kernel(args a, grad_args w) {
  using L = grads_layout;
  const int b = static_cast<int>(blockIdx.x), n = b % a.NT, bh = b / a.NT;
  const unsigned listing = w.listed[static_cast<int64_t>(bh) * a.NT + n];
  if (listing & grads_listing::kWholeChunk) return;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t t0 = static_cast<int64_t>(n) * C;
  const int64_t head = head_row(bh, a.H, a.T);
  const int64_t ks = static_cast<int64_t>(a.H) * a.K, vs = static_cast<int64_t>(a.H) * a.V;
  load_rows128(sm + L::q, a.q + head * a.K, t0, a.T, ks, a.K, kNarrow);
  load_rows128(sm + L::k, a.k + head * a.K, t0, a.T, ks, a.K, kNarrow);
  load_rows128(sm + L::g, a.g + head * a.K, t0, a.T, ks, a.K, kNarrow);
  load_rows128(sm + L::v, a.v + head * a.V, t0, a.T, vs, a.V, kNarrow);
  load_rows128(sm + L::d_o, w.d_o + head * a.V, t0, a.T, vs, a.V, kNarrow);
  tc::cp_async_commit();
  const int64_t slot = (static_cast<int64_t>(bh) * (a.NT + 1) + n) * w.Kp * w.Vp;
  state_operands_and_y(smem, L::s, L::ds, L::y, w.states + slot, w.dstates + slot, w.Kp, w.Vp);
  if (tid < SUBS * KP / 32) at<unsigned>(smem, L::strong + 4 * tid) = 0u;
  tc::cp_async_wait_all();
  __syncthreads();
  const int j = tid >> 6, p = tid & 63;  // stages 1–2: sub-chunk, feature pair
  float l0[SUB], l1[SUB];
  walk_decay_cumsum(smem, j, p, l0, l1, L::g, L::tots);
  __syncthreads();  // totals written, g read: G overwrites it
  walk_prepare_grads(smem, j, p, l0, l1);
  __syncthreads();
  const int mt = warp >> 1, half = warp & 1;
  const int64_t rows = a.T - t0;
  // A K slab (of the warp's half) that the state walk listed: its dq, dk and dg are the
  // WMMA bodies'.
  const int kcols = listing & (grads_listing::kSlab0 << half) ? 0 : a.K;
  const grads_out dq{w.dq + head * a.K + t0 * ks, ks, rows, kcols},
      dk{w.dk + head * a.K + t0 * ks, ks, rows, kcols},
      dv{w.dv + head * a.V + t0 * vs, vs, rows, a.V},
      dg{w.dg + head * a.K + t0 * ks, ks, rows, kcols};
  const chunk_rows x{a.q + head * a.K + t0 * ks, a.k + head * a.K + t0 * ks, ks, rows};
  float Tg[8][4], Pg[8][4];
  walk_grad_rows(smem, sm, mt, lane, half, a.scale, x, dq, dk, dv, Tg, Pg);
  walk_grad_dg(smem, mt, lane, half, dg, Tg, Pg);
  const grads_out all_q{dq.base, ks, rows, a.K}, all_k{dk.base, ks, rows, a.K},
      all_g{dg.base, ks, rows, a.K};
  rewrite_strong_features(smem, sm, x, a.scale, listing, all_q, all_k, all_g);
}

}  // namespace glabench::chunked::walk
