// The bf16 forward in one pass: the chunk walk. One block per (V slab of 64 columns,
// head) walks the chunks in order and keeps the K×64 state in registers, as the seed's
// fused_chunk_gla_fwd_kernel does; every stage of a chunk runs inside the walk, on
// mma.sync with fragments in registers:
//
//   stage 1  walk_decay_cumsum     the cumulative log2 gates of each 16-token sub-chunk
//   stage 2  walk_prepare_qg_kg    q̄, q̃, k̄, k̂: the operands with their decays
//   stage 3  walk_state_update     S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v   (and q̃·S in walk_combine)
//   stage 4  walk_inner_chunk      A = q̄·k̄ᵀ per sub-chunk row, masked
//   stage 5  walk_combine          o = scale·(q̃·S + A·v), A straight from registers
//
// Nothing goes through the workspace: states never leave the block. The next chunk's q,
// k, v and g load (cp.async) while this one computes.
//
// Gates are log2 (g·log2 e), cumulative inside each 16-token sub-chunk j: l[s] ≤ 0 from
// the sub-chunk's start, T_j = l[last]. With Γ_i = T_0 + … + T_{i−1} the gate before
// sub-chunk i:
//   q̄[t]      = q[t]·2^{l[t]}                         ≤ |q|  (reference Γ_i, t in i)
//   q̃[t]      = q̄[t]·2^{Γ_i}                          ≤ |q|  (reference: chunk start)
//   k̄⁽ⁱ⁾[s]    = k[s]·2^{Γ_i − G[s]}  for s ≤ i's last token:
//               s in an earlier sub-chunk j: k[s]·2^{T_j − l[s]}·2^{T_{j+1}+…+T_{i−1}} ≤ |k|
//               s in i itself (the diagonal block): k[s]·2^{−l[s]} ≤ |k|·2^{−T_i}
//   k̂[s]      = k[s]·2^{G[C−1] − G[s]}                ≤ |k|  (reference: chunk end)
// Every exponent is a sum of gates in a fixed order, never a difference of two large
// cumulative sums. The one factor above 1 is the diagonal block's 2^{−l[s]}, bounded by
// 2^{−T_i}; where a sub-chunk's gates in a feature sum below −kSafeLog2, that feature's
// diagonal block leaves the tensor cores and is summed pair by pair (walk_inner_chunk_
// strong_gates), each pair's decay a sum of its own gates. So a gate of −30 on a token,
// −10⁴ over a chunk, or exactly 0 all stay exact.
//
// States and scores enter o's products as two bf16 operands each, the rounding and its
// residual (S_hi + S_lo, A_hi + A_lo).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "mma_sync.cuh"

namespace glabench::chunked::walk {

using bf16 = __nv_bfloat16;

inline constexpr int C = 64, SUB = 16, SUBS = C / SUB, KP = 128, BV = 64, THREADS = 256;
inline constexpr int KROW = KP * 2, VROW = BV * 2;  // bytes of a shared-memory row
inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kSafeLog2 = 64.f;
inline constexpr float kMildLog2 = 16.f;

// The first row of k̄⁽ⁱ⁾ (16(i+1) rows, tokens 0 … 16i+15) in the stacked array.
__host__ __device__ constexpr int kbar_row0(int i) { return 8 * i * (i + 1); }

// The block's shared memory, byte offsets. v is double-buffered, loaded a chunk ahead;
// q, k and g have one buffer each, refilled once stage 2 has read them. q̄ and the
// diagonal blocks' k̄ carry the residual of their bf16 rounding (the *_lo arrays).
struct layout {
  static constexpr uint32_t tile_k = C * KROW, tile_v = C * VROW;
  static constexpr uint32_t q = 0, k = q + tile_k, g = k + tile_k, v = g + tile_k;
  static constexpr uint32_t qbar = v + 2 * tile_v, qbar_lo = qbar + tile_k, qtil = qbar_lo + tile_k;
  static constexpr uint32_t khat = qtil + tile_k, kdiag_lo = khat + tile_k, kbar = kdiag_lo + tile_k;
  static constexpr uint32_t s_hi = kbar + kbar_row0(SUBS) * KROW, s_lo = s_hi + KP * VROW;
  static constexpr uint32_t tots = s_lo + KP * VROW;              // float [SUBS][KP]
  static constexpr uint32_t corr = tots + SUBS * KP * 4;          // float [SUBS][SUB][SUB]
  static constexpr uint32_t flag = corr + SUBS * SUB * SUB * 4;   // int [2], by chunk parity
  static constexpr uint32_t bytes = flag + 16;
};
static_assert(layout::bytes <= 227 * 1024, "one block per SM");

struct args {
  const bf16 *q, *k, *v, *g, *h0;
  bf16 *o, *ht;
  int H, K, V, NT;
  int64_t T;
  float scale;
  // The sequence split (chunk_walk_segment_states_kernel): the walk runs `segs`
  // segments of `seg_chunks` chunks, one block each (grid z). Each segment but the last
  // is cut into `subs` pieces of `sub_chunks` chunks; the first pass leaves piece m's
  // state contribution in dstate [m][B·H][V slabs][KP][BV] and its summed log2 gates in
  // dgate [m][B·H][KP]. One segment: no split, both unused.
  int segs, seg_chunks, subs, sub_chunks;
  float *dstate, *dgate;
};

template <class T>
__device__ __forceinline__ T& at(unsigned char* smem, uint32_t off) {
  return *reinterpret_cast<T*>(smem + off);
}
__device__ __forceinline__ float2 pair_at(const unsigned char* smem, uint32_t off) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(smem + off));
}

// The byte offset of feature pair p (features 2p, 2p+1) of row r in a K-wide tile.
__device__ __forceinline__ uint32_t pair_offset(int r, int p) {
  return tc::swizzle<KROW>(r, p >> 2) + ((p & 3) << 2);
}

// ---- stage 1: fwd_decay_cumsum -------------------------------------------------------
// Thread (sub-chunk j, feature pair p): l[u] = Σ_{w ≤ u} g[16j + w]·log2 e in token
// order, and the sub-chunk's total T_j into tots[j].
__device__ __forceinline__ void walk_decay_cumsum(unsigned char* smem, int j, int p, float (&l0)[SUB],
                                                  float (&l1)[SUB]) {
  float s0 = 0.f, s1 = 0.f;
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const float2 g = pair_at(smem, layout::g + pair_offset(SUB * j + u, p));
    s0 = fmaf(g.x, kLog2e, s0);
    s1 = fmaf(g.y, kLog2e, s1);
    l0[u] = s0;
    l1[u] = s1;
  }
  at<float>(smem, layout::tots + (j * KP + 2 * p) * 4) = s0;
  at<float>(smem, layout::tots + (j * KP + 2 * p + 1) * 4) = s1;
}

// ---- stage 2: prepare_qg_kg ----------------------------------------------------------
// Thread (j, p) writes its 16 tokens × 2 features of q̄ (and its residual), q̃, k̄⁽ʲ⁾ (and
// its residual) … k̄⁽³⁾ and k̂. `strong0/1`: the sub-chunk's gates in this feature sum
// below −kSafeLog2, so its diagonal block is left to walk_inner_chunk_strong_gates
// (k̄⁽ʲ⁾ = 0 there).
__device__ __forceinline__ void walk_prepare_qg_kg(unsigned char* smem, int j, int p, const float (&l0)[SUB],
                                                   const float (&l1)[SUB], bool strong0, bool strong1) {
  float T0[SUBS], T1[SUBS];
#pragma unroll
  for (int m = 0; m < SUBS; ++m) {
    T0[m] = at<float>(smem, layout::tots + (m * KP + 2 * p) * 4);
    T1[m] = at<float>(smem, layout::tots + (m * KP + 2 * p + 1) * 4);
  }
  float G0 = 0.f, G1 = 0.f, tj0 = 0.f, tj1 = 0.f;  // Γ_j, T_j
#pragma unroll
  for (int m = 0; m < SUBS; ++m) {
    if (m < j) G0 += T0[m], G1 += T1[m];
    if (m == j) tj0 = T0[m], tj1 = T1[m];
  }
  const float eG0 = tc::ex2(G0), eG1 = tc::ex2(G1), etj0 = tc::ex2(tj0), etj1 = tc::ex2(tj1);
  // P[i] = 2^{T_{j+1} + … + T_{i−1}} for i > j; i = SUBS is the chunk's end (k̂).
  float P0[SUBS + 1], P1[SUBS + 1];
  {
    float a0 = 0.f, a1 = 0.f;
#pragma unroll
    for (int i = 1; i <= SUBS; ++i) {
      if (i - 1 > j) a0 += T0[i - 1], a1 += T1[i - 1];
      P0[i] = tc::ex2(a0);
      P1[i] = tc::ex2(a1);
    }
  }
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const uint32_t off = pair_offset(SUB * j + u, p);
    const float2 q = pair_at(smem, layout::q + off), k = pair_at(smem, layout::k + off);
    uint32_t hi, lo;
    const float qb0 = q.x * tc::ex2(l0[u]), qb1 = q.y * tc::ex2(l1[u]);
    tc::split_bf16(qb0, qb1, hi, lo);
    at<uint32_t>(smem, layout::qbar + off) = hi;
    at<uint32_t>(smem, layout::qbar_lo + off) = lo;
    at<uint32_t>(smem, layout::qtil + off) = tc::pack_bf16(qb0 * eG0, qb1 * eG1);
    const float ek0 = tc::ex2(-l0[u]), ek1 = tc::ex2(-l1[u]);
    tc::split_bf16(strong0 ? 0.f : k.x * ek0, strong1 ? 0.f : k.y * ek1, hi, lo);
    at<uint32_t>(smem, layout::kbar + kbar_row0(j) * KROW + off) = hi;
    at<uint32_t>(smem, layout::kdiag_lo + off) = lo;
    // k[s]·2^{T_j − l[s]}: decayed to the sub-chunk's end
    const float kf0 = k.x * (strong0 ? tc::ex2(tj0 - l0[u]) : ek0 * etj0);
    const float kf1 = k.y * (strong1 ? tc::ex2(tj1 - l1[u]) : ek1 * etj1);
#pragma unroll
    for (int i = 1; i < SUBS; ++i)
      if (i > j) at<uint32_t>(smem, layout::kbar + kbar_row0(i) * KROW + off) = tc::pack_bf16(kf0 * P0[i], kf1 * P1[i]);
    at<uint32_t>(smem, layout::khat + off) = tc::pack_bf16(kf0 * P0[SUBS], kf1 * P1[SUBS]);
  }
}

// Stage 2 for a mild chunk, where every sub-chunk's gates sum to ≥ −kMildLog2 in every
// feature, so 2^{−G[s]} ≤ 2^{4·kMildLog2} from the chunk's start: one reference for the
// whole chunk. q̃ (with its residual) is then also the scores' query operand, and
// k̃[s] = k[s]·2^{−G[s]} (with its residual) the key operand of every sub-chunk row;
// k̂ = k̃·2^{G[C−1]}. Half the work of the sub-chunk references.
__device__ __forceinline__ void walk_prepare_qg_kg_mild(unsigned char* smem, int j, int p,
                                                        const float (&l0)[SUB], const float (&l1)[SUB]) {
  float G0 = 0.f, G1 = 0.f, E0 = 0.f, E1 = 0.f;  // Γ_j and G[C−1]
#pragma unroll
  for (int m = 0; m < SUBS; ++m) {
    const float t0 = at<float>(smem, layout::tots + (m * KP + 2 * p) * 4);
    const float t1 = at<float>(smem, layout::tots + (m * KP + 2 * p + 1) * 4);
    if (m < j) G0 += t0, G1 += t1;
    E0 += t0, E1 += t1;
  }
  E0 = tc::ex2(E0), E1 = tc::ex2(E1);
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const uint32_t off = pair_offset(SUB * j + u, p);
    const float2 q = pair_at(smem, layout::q + off), k = pair_at(smem, layout::k + off);
    const float x0 = G0 + l0[u], x1 = G1 + l1[u];
    uint32_t hi, lo;
    tc::split_bf16(q.x * tc::ex2(x0), q.y * tc::ex2(x1), hi, lo);
    at<uint32_t>(smem, layout::qtil + off) = hi;
    at<uint32_t>(smem, layout::qbar_lo + off) = lo;
    const float k0 = k.x * tc::ex2(-x0), k1 = k.y * tc::ex2(-x1);
    tc::split_bf16(k0, k1, hi, lo);
    at<uint32_t>(smem, layout::kbar + off) = hi;
    at<uint32_t>(smem, layout::kdiag_lo + off) = lo;
    at<uint32_t>(smem, layout::khat + off) = tc::pack_bf16(k0 * E0, k1 * E1);
  }
}

// Stage 2 of the split's first pass: k̂ alone, k[s]·2^{T_j − l[s]}·2^{T_{j+1} + … + T_3}.
__device__ __forceinline__ void walk_prepare_kg(unsigned char* smem, int j, int p, const float (&l0)[SUB],
                                                const float (&l1)[SUB]) {
  float a0 = 0.f, a1 = 0.f, tj0 = 0.f, tj1 = 0.f;
#pragma unroll
  for (int m = 0; m < SUBS; ++m) {
    const float t0 = at<float>(smem, layout::tots + (m * KP + 2 * p) * 4);
    const float t1 = at<float>(smem, layout::tots + (m * KP + 2 * p + 1) * 4);
    if (m > j) a0 += t0, a1 += t1;
    if (m == j) tj0 = t0, tj1 = t1;
  }
  const float P0 = tc::ex2(a0), P1 = tc::ex2(a1);
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const uint32_t off = pair_offset(SUB * j + u, p);
    const float2 k = pair_at(smem, layout::k + off);
    at<uint32_t>(smem, layout::khat + off) =
        tc::pack_bf16(k.x * tc::ex2(tj0 - l0[u]) * P0, k.y * tc::ex2(tj1 - l1[u]) * P1);
  }
}

// ---- stage 4, strong gates: the diagonal block pair by pair --------------------------
// For the features of sub-chunk j whose gates sum below −kSafeLog2, adds
//   Σ_f q[t][f]·k[s][f]·2^{g[s+1] + … + g[t]}      (s ≤ t in the sub-chunk)
// into corr[j][t][s]: each pair's decay a sum of its own gates. The two warps of a
// sub-chunk add into a zeroed slot, so the order does not change the sum.
__device__ void walk_inner_chunk_strong_gates(unsigned char* smem, int j, int p, bool strong0, bool strong1) {
  float g0[SUB], g1[SUB], q0[SUB], q1[SUB], k0[SUB], k1[SUB];
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const uint32_t off = pair_offset(SUB * j + u, p);
    const float2 g = pair_at(smem, layout::g + off), q = pair_at(smem, layout::q + off),
                 k = pair_at(smem, layout::k + off);
    g0[u] = g.x, g1[u] = g.y;
    q0[u] = strong0 ? q.x : 0.f, q1[u] = strong1 ? q.y : 0.f;
    k0[u] = k.x, k1[u] = k.y;
  }
  float* corr = reinterpret_cast<float*>(smem + layout::corr) + j * SUB * SUB;
#pragma unroll
  for (int s = 0; s < SUB; ++s) {
    float d0 = 0.f, d1 = 0.f;
#pragma unroll
    for (int t = s; t < SUB; ++t) {
      if (t > s) d0 = fmaf(g0[t], kLog2e, d0), d1 = fmaf(g1[t], kLog2e, d1);
      float x = q0[t] * k0[s] * tc::ex2(d0) + q1[t] * k1[s] * tc::ex2(d1);
#pragma unroll
      for (int w = 16; w >= 1; w >>= 1) x += __shfl_xor_sync(0xffffffffu, x, w);
      if ((threadIdx.x & 31) == 0) atomicAdd(corr + t * SUB + s, x);
    }
  }
}

// ---- fragment addresses --------------------------------------------------------------
// A lane's ldmatrix addresses, as byte offsets from the shared-memory base. In a tile of
// 256-byte rows the 16-byte chunk 2kk + h of row r sits at r·256 + (((2kk + h) ^ r%8)·16)
// = (r·256 + ((h ^ r%8)·16)) ^ (kk·32): one XOR a k-step. Row steps of 16 add.
struct lane_offsets {
  uint32_t a_rows;     // A operand (16 rows × 16 features) of a K-wide tile: row lane%16
  uint32_t b_rows;     // B operand from a K-wide tile of keys (two n8 tiles): key row
  uint32_t t_state;    // k̂ᵀ as A operand (transposing): token row, this warp's features
  uint32_t t_vals[4];  // v (or S) as B operand (transposing), 16-column group np of 4
  uint32_t t_half[2];  // the same for this warp's output columns: groups 2·half + np
  __device__ lane_offsets(int warp, int lane) {
    const int x = lane & 7, h16 = lane >> 4, h8 = (lane >> 3) & 1;
    a_rows = (lane & 15) * KROW + ((h16 ^ x) << 4);
    b_rows = (x + (h16 << 3)) * KROW + ((h8 ^ x) << 4);
    t_state = (x + (h16 << 3)) * KROW + (((2 * warp + h8) ^ x) << 4);
    const int r16 = x + (h8 << 3);
#pragma unroll
    for (int np = 0; np < 4; ++np) t_vals[np] = r16 * VROW + (((2 * np + h16) ^ x) << 4);
#pragma unroll
    for (int np = 0; np < 2; ++np) t_half[np] = r16 * VROW + (((4 * (warp & 1) + 2 * np + h16) ^ x) << 4);
  }
};
__device__ __forceinline__ uint32_t kstep(uint32_t lane_off, int kk) { return lane_off ^ (kk << 5); }

// ---- stage 3: the state -------------------------------------------------------------
// Warp w holds rows 16w … 16w+15 of the K×64 state as eight m16n8 accumulator tiles.
struct state_rows {
  int lo, hi;  // the feature rows of c0/c1 and c2/c3
  __device__ explicit state_rows(int warp, int lane) : lo(16 * warp + (lane >> 2)), hi(lo + 8) {}
};

// S_n into shared memory as the bf16 pair (hi, lo) that walk_combine reads.
__device__ __forceinline__ void walk_state_to_shared(unsigned char* smem, const float (&S)[8][4], state_rows f,
                                                     int lane) {
  const int c2 = (lane & 3) << 2;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    uint32_t hi, lo;
    tc::split_bf16(S[jn][0], S[jn][1], hi, lo);
    at<uint32_t>(smem, layout::s_hi + tc::swizzle<VROW>(f.lo, jn) + c2) = hi;
    at<uint32_t>(smem, layout::s_lo + tc::swizzle<VROW>(f.lo, jn) + c2) = lo;
    tc::split_bf16(S[jn][2], S[jn][3], hi, lo);
    at<uint32_t>(smem, layout::s_hi + tc::swizzle<VROW>(f.hi, jn) + c2) = hi;
    at<uint32_t>(smem, layout::s_lo + tc::swizzle<VROW>(f.hi, jn) + c2) = lo;
  }
}

// S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v  (rows of warp w; k̂ᵀ by transposing ldmatrix).
__device__ __forceinline__ void walk_state_update(const unsigned char* smem, uint32_t sm, uint32_t v_tile,
                                                  const lane_offsets& lo, float (&S)[8][4], state_rows f) {
  auto chunk_gate = [&](int row) {
    const float* t = reinterpret_cast<const float*>(smem + layout::tots);
    return tc::ex2(((t[row] + t[KP + row]) + t[2 * KP + row]) + t[3 * KP + row]);
  };
  const float d_lo = chunk_gate(f.lo), d_hi = chunk_gate(f.hi);
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) S[jn][0] *= d_lo, S[jn][1] *= d_lo, S[jn][2] *= d_hi, S[jn][3] *= d_hi;
#pragma unroll
  for (int ks = 0; ks < C / 16; ++ks) {
    uint32_t a[4];
    tc::ldsm_x4_trans(a, sm + layout::khat + lo.t_state + ks * 16 * KROW);
#pragma unroll
    for (int np = 0; np < BV / 16; ++np) {
      uint32_t b[4];
      tc::ldsm_x4_trans(b, v_tile + lo.t_vals[np] + ks * 16 * VROW);
      tc::mma(S[2 * np], a, b[0], b[1]);
      tc::mma(S[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// ---- stage 4: fwd_inner_chunk --------------------------------------------------------
// A for the 16 rows of sub-chunk mt against keys 0 … 16mt+15: eight m16n8 tiles (the
// first 2(mt+1) used), causal mask on the diagonal block, plus the strong-gate terms.
// The diagonal block, whose decays are the weakest and whose terms the largest, takes
// the residuals too: q̄·k̄ = q̄_hi·k̄_hi + q̄_lo·k̄_hi + q̄_hi·k̄_lo.
// A mild chunk (walk_prepare_qg_kg_mild) reads q̃ and k̃ (k̄ rows 0 … 63) instead.
// MT is the warp's row sub-chunk as a template argument: the loops over key blocks are
// then straight code, with no branches around mma.sync.
template <int MT>
__device__ __forceinline__ void walk_inner_chunk(const unsigned char* smem, uint32_t sm, const lane_offsets& lo,
                                                 int lane, bool mild, bool strong_chunk, float (&A)[8][4]) {
  constexpr int mt = MT;
#pragma unroll
  for (int jt = 0; jt < 8; ++jt) A[jt][0] = A[jt][1] = A[jt][2] = A[jt][3] = 0.f;
  const uint32_t q_rows = (mild ? layout::qtil : layout::qbar) + 16 * mt * KROW + lo.a_rows;
  const uint32_t k_rows = layout::kbar + (mild ? 0 : kbar_row0(mt) * KROW) + lo.b_rows;
  const uint32_t kd_rows = layout::kdiag_lo + 16 * mt * KROW + lo.b_rows;
#pragma unroll
  for (int kk = 0; kk < KP / 16; ++kk) {
    uint32_t a[4], b[4];
    tc::ldsm_x4(a, sm + kstep(q_rows, kk));
#pragma unroll
    for (int jp = 0; jp < mt; ++jp) {
      tc::ldsm_x4(b, sm + kstep(k_rows, kk) + jp * 16 * KROW);
      tc::mma(A[2 * jp], a, b[0], b[1]);
      tc::mma(A[2 * jp + 1], a, b[2], b[3]);
    }
    uint32_t a_lo[4], b_lo[4];
    tc::ldsm_x4(b, sm + kstep(k_rows, kk) + mt * 16 * KROW);
    tc::ldsm_x4(a_lo, sm + kstep(layout::qbar_lo + 16 * mt * KROW + lo.a_rows, kk));
    tc::ldsm_x4(b_lo, sm + kstep(kd_rows, kk));
    tc::mma(A[2 * mt], a, b[0], b[1]);
    tc::mma(A[2 * mt + 1], a, b[2], b[3]);
    tc::mma(A[2 * mt], a_lo, b[0], b[1]);
    tc::mma(A[2 * mt + 1], a_lo, b[2], b[3]);
    tc::mma(A[2 * mt], a, b_lo[0], b_lo[1]);
    tc::mma(A[2 * mt + 1], a, b_lo[2], b_lo[3]);
  }
  const int tr = lane >> 2, sc = (lane & 3) << 1;
  const float* corr = reinterpret_cast<const float*>(smem + layout::corr) + mt * SUB * SUB;
#pragma unroll
  for (int jt = 2 * mt; jt < 2 * mt + 2; ++jt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int t = tr + (e >> 1) * 8, s = (jt & 1) * 8 + sc + (e & 1);
      if (s > t)
        A[jt][e] = 0.f;
      else if (strong_chunk)
        A[jt][e] += corr[t * SUB + s];
    }
  }
}

// ---- stages 3 (output) and 5: combine ------------------------------------------------
// o for rows of sub-chunk mt and the warp's 32 columns (lane_offsets::t_half): q̃·(S_hi + S_lo) + (A_hi + A_lo)·v.
template <int MT>
__device__ __forceinline__ void walk_combine(uint32_t sm, uint32_t v_tile, const lane_offsets& lo,
                                             const float (&A)[8][4], float (&O)[4][4]) {
  constexpr int mt = MT;
#pragma unroll
  for (int jn = 0; jn < 4; ++jn) O[jn][0] = O[jn][1] = O[jn][2] = O[jn][3] = 0.f;
  const uint32_t q_rows = layout::qtil + 16 * mt * KROW + lo.a_rows;
#pragma unroll
  for (int kk = 0; kk < KP / 16; ++kk) {
    uint32_t a[4];
    tc::ldsm_x4(a, sm + kstep(q_rows, kk));
#pragma unroll
    for (int np = 0; np < 2; ++np) {
      const uint32_t off = lo.t_half[np] + kk * 16 * VROW;
      uint32_t hi[4], lw[4];
      tc::ldsm_x4_trans(hi, sm + layout::s_hi + off);
      tc::ldsm_x4_trans(lw, sm + layout::s_lo + off);
      tc::mma(O[2 * np], a, hi[0], hi[1]);
      tc::mma(O[2 * np + 1], a, hi[2], hi[3]);
      tc::mma(O[2 * np], a, lw[0], lw[1]);
      tc::mma(O[2 * np + 1], a, lw[2], lw[3]);
    }
  }
#pragma unroll
  for (int jp = 0; jp <= mt; ++jp) {
    uint32_t hi[4], lw[4];
    tc::split_bf16(A[2 * jp][0], A[2 * jp][1], hi[0], lw[0]);
    tc::split_bf16(A[2 * jp][2], A[2 * jp][3], hi[1], lw[1]);
    tc::split_bf16(A[2 * jp + 1][0], A[2 * jp + 1][1], hi[2], lw[2]);
    tc::split_bf16(A[2 * jp + 1][2], A[2 * jp + 1][3], hi[3], lw[3]);
#pragma unroll
    for (int np = 0; np < 2; ++np) {
      uint32_t b[4];
      tc::ldsm_x4_trans(b, v_tile + lo.t_half[np] + jp * 16 * VROW);
      tc::mma(O[2 * np], hi, b[0], b[1]);
      tc::mma(O[2 * np + 1], hi, b[2], b[3]);
      tc::mma(O[2 * np], lw, b[0], b[1]);
      tc::mma(O[2 * np + 1], lw, b[2], b[3]);
    }
  }
}

// Stages 4 and 5 for the warp's row sub-chunk MT: the scores, then o into registers.
template <int MT>
__device__ __forceinline__ void walk_outputs(const unsigned char* smem, uint32_t sm, uint32_t v_tile,
                                             const lane_offsets& lo, int lane, bool mild, bool strong_chunk,
                                             float (&O)[4][4]) {
  float A[8][4];
  walk_inner_chunk<MT>(smem, sm, lo, lane, mild, strong_chunk, A);
  walk_combine<MT>(sm, v_tile, lo, A, O);
}

// ---- the block's tensors and loads ---------------------------------------------------
// One head's q, k, g (from feature 0) and v, o (from column v0) in the [B,T,H,D] layout,
// and the cp.async loads of a chunk's tiles; zeros past T, K and V.
struct walk_io {
  enum : int { kQ = 1, kK = 2, kG = 4 };
  const bf16 *q, *k, *g, *v;
  bf16* o;
  int64_t ks, vs, T;
  int K, V, v0;
  uint32_t sm;
  // `values`: the V-wide input the walk reads (v; do in the backward's dS walk).
  __device__ walk_io(const args& a, uint32_t sm_, const bf16* values = nullptr)
      : ks(static_cast<int64_t>(a.H) * a.K), vs(static_cast<int64_t>(a.H) * a.V), T(a.T), K(a.K), V(a.V),
        v0(blockIdx.x * BV), sm(sm_) {
    const int bh = blockIdx.y;
    const int64_t head = static_cast<int64_t>(bh / a.H) * a.T * a.H + bh % a.H;
    q = a.q + head * a.K, k = a.k + head * a.K, g = a.g + head * a.K;
    v = (values ? values : a.v) + head * a.V + v0, o = a.o ? a.o + head * a.V + v0 : nullptr;
  }
  // The K-wide tiles `which` (kQ | kK | kG) of the chunk at t0.
  __device__ void load_keyed(int64_t t0, int which) const {
#pragma unroll
    for (int it = 0; it < C * (KROW / 16) / THREADS; ++it) {
      const int i = threadIdx.x + it * THREADS, r = i >> 4, c = i & 15;
      const bool in = t0 + r < T && c * 8 < K;
      const int64_t at_ = in ? (t0 + r) * ks + c * 8 : 0;
      const uint32_t dst = sm + tc::swizzle<KROW>(r, c);
      if (which & kQ) tc::cp_async16(dst + layout::q, q + at_, in ? 16 : 0);
      if (which & kK) tc::cp_async16(dst + layout::k, k + at_, in ? 16 : 0);
      if (which & kG) tc::cp_async16(dst + layout::g, g + at_, in ? 16 : 0);
    }
  }
  __device__ void load_values(int buf, int64_t t0) const {
#pragma unroll
    for (int it = 0; it < C * (VROW / 16) / THREADS; ++it) {
      const int i = threadIdx.x + it * THREADS, r = i >> 3, c = i & 7;
      const bool in = t0 + r < T && v0 + c * 8 < V;
      tc::cp_async16(sm + layout::v + buf * layout::tile_v + tc::swizzle<VROW>(r, c),
                     in ? v + (t0 + r) * vs + c * 8 : v, in ? 16 : 0);
    }
  }
};

// A K×BV state tile of head bh in the ABI's [B·H][K][V] bf16 layout (h0, ht), as warp
// rows f: each thread's eight column pairs of rows f.lo and f.hi.
__device__ __forceinline__ int64_t abi_state_at(const args& a, int row, int col) {
  return (static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + col;
}

// A segment's state tile in the split's workspace (fp32, [KP][BV]).
__device__ __forceinline__ float* split_state(const args& a, int seg) {
  return a.dstate + ((static_cast<int64_t>(seg) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * KP * BV;
}
__device__ __forceinline__ float* split_gate(const args& a, int seg) {
  return a.dgate + (static_cast<int64_t>(seg) * gridDim.y + blockIdx.y) * KP;
}

// A block's K×BV tile of an ABI state ([B·H][K][V] bf16: h0, ht, dht, dh0) as the warp
// rows f hold it in registers; zero outside K and V, or when absent.
__device__ __forceinline__ void load_abi_tile(const bf16* src, const args& a, state_rows f, int lane,
                                              float (&S)[8][4]) {
  const int c2 = (lane & 3) << 1;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const int v = blockIdx.x * BV + 8 * jn + c2;
    float2 s_lo = make_float2(0.f, 0.f), s_hi = s_lo;
    if (src && v < a.V) {
      if (f.lo < a.K) s_lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + abi_state_at(a, f.lo, v)));
      if (f.hi < a.K) s_hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + abi_state_at(a, f.hi, v)));
    }
    S[jn][0] = s_lo.x, S[jn][1] = s_lo.y, S[jn][2] = s_hi.x, S[jn][3] = s_hi.y;
  }
}
__device__ __forceinline__ void store_abi_tile(bf16* dst, const args& a, state_rows f, int lane,
                                               const float (&S)[8][4]) {
  if (!dst) return;
  const int c2 = (lane & 3) << 1;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const int v = blockIdx.x * BV + 8 * jn + c2;
    if (v >= a.V) continue;
    if (f.lo < a.K) *reinterpret_cast<uint32_t*>(dst + abi_state_at(a, f.lo, v)) = tc::pack_bf16(S[jn][0], S[jn][1]);
    if (f.hi < a.K) *reinterpret_cast<uint32_t*>(dst + abi_state_at(a, f.hi, v)) = tc::pack_bf16(S[jn][2], S[jn][3]);
  }
}

// ---- the walk ------------------------------------------------------------------------
__global__ void __launch_bounds__(THREADS, 1) chunk_walk_bf16_kernel(args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const walk_io io(a, sm);
  const int seg = blockIdx.z, n0 = seg * a.seg_chunks, n1 = min(a.NT, n0 + a.seg_chunks);

  const state_rows f(warp, lane);
  const lane_offsets lo(warp, lane);
  const int c2 = (lane & 3) << 1;
  // The state before chunk n0: h0, carried over the pieces before the segment.
  float S[8][4];
  load_abi_tile(a.h0, a, f, lane, S);
  for (int m = 0; m < seg * a.subs; ++m) {
    const float* ds = split_state(a, m);
    const float d_lo = tc::ex2(split_gate(a, m)[f.lo]), d_hi = tc::ex2(split_gate(a, m)[f.hi]);
#pragma unroll
    for (int jn = 0; jn < 8; ++jn) {
      const float2 x = *reinterpret_cast<const float2*>(ds + f.lo * BV + 8 * jn + c2);
      const float2 y = *reinterpret_cast<const float2*>(ds + f.hi * BV + 8 * jn + c2);
      S[jn][0] = fmaf(d_lo, S[jn][0], x.x), S[jn][1] = fmaf(d_lo, S[jn][1], x.y);
      S[jn][2] = fmaf(d_hi, S[jn][2], y.x), S[jn][3] = fmaf(d_hi, S[jn][3], y.y);
    }
  }

  io.load_keyed(static_cast<int64_t>(n0) * C, walk_io::kQ | walk_io::kK | walk_io::kG);
  io.load_values(0, static_cast<int64_t>(n0) * C);
  tc::cp_async_commit();
  if (tid == 0) at<int>(smem, layout::flag) = 0;

  const int j = tid >> 6, p = tid & 63;       // stages 1–2: sub-chunk, feature pair
  // Stages 4–5: the warp's sub-chunk rows and column half. Row sub-chunk mt costs more
  // the larger mt; warps w and w+4 share a scheduler, so each pairs mt = 0 with 3 or 1
  // with 2.
  const int mt = (0x22331100 >> (4 * warp)) & 3, half = warp & 1;
  for (int n = n0; n < n1; ++n) {
    const int cur = (n - n0) & 1;
    const int64_t t0 = static_cast<int64_t>(n) * C;
    const uint32_t v_tile = sm + layout::v + cur * layout::tile_v;
    tc::cp_async_wait_all();
    __syncthreads();  // chunk n has landed; chunk n−1 is done with every buffer
    if (n + 1 < n1) {
      io.load_values(cur ^ 1, t0 + C);
      tc::cp_async_commit();
    }
    walk_state_to_shared(smem, S, f, lane);
    reinterpret_cast<float4*>(smem + layout::corr)[tid] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (tid == 0) at<int>(smem, layout::flag + 4 * (cur ^ 1)) = 0;

    float l0[SUB], l1[SUB];
    walk_decay_cumsum(smem, j, p, l0, l1);
    const bool strong0 = l0[SUB - 1] < -kSafeLog2, strong1 = l1[SUB - 1] < -kSafeLog2;
    if (strong0 || strong1) at<int>(smem, layout::flag + 4 * cur) = 1;
    // totals and flag written
    const bool mild = __syncthreads_and(l0[SUB - 1] >= -kMildLog2 && l1[SUB - 1] >= -kMildLog2);
    const bool strong_chunk = at<int>(smem, layout::flag + 4 * cur) != 0;
    if (mild) {
      walk_prepare_qg_kg_mild(smem, j, p, l0, l1);
    } else {
      walk_prepare_qg_kg(smem, j, p, l0, l1, strong0, strong1);
      if (strong_chunk && __any_sync(0xffffffffu, strong0 || strong1))
        walk_inner_chunk_strong_gates(smem, j, p, strong0, strong1);
    }
    __syncthreads();  // operands written; q, k and g read
    if (n + 1 < n1) {
      io.load_keyed(t0 + C, walk_io::kQ | walk_io::kK | walk_io::kG);
      tc::cp_async_commit();
    }

    float O[4][4];
    switch (mt) {  // warp-uniform
      case 0: walk_outputs<0>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O); break;
      case 1: walk_outputs<1>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O); break;
      case 2: walk_outputs<2>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O); break;
      default: walk_outputs<3>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O); break;
    }
    walk_state_update(smem, sm, v_tile, lo, S, f);
    const int64_t r_lo = t0 + 16 * mt + (lane >> 2), r_hi = r_lo + 8;
    bf16* o_lo = io.o + r_lo * io.vs + 32 * half + c2;
    bf16* o_hi = o_lo + 8 * io.vs;
    const bool row_lo = r_lo < a.T, row_hi = r_hi < a.T;
#pragma unroll
    for (int jn = 0; jn < 4; ++jn) {
      if (io.v0 + 32 * half + 8 * jn >= a.V) break;
      if (row_lo) *reinterpret_cast<uint32_t*>(o_lo + 8 * jn) = tc::pack_bf16(a.scale * O[jn][0], a.scale * O[jn][1]);
      if (row_hi) *reinterpret_cast<uint32_t*>(o_hi + 8 * jn) = tc::pack_bf16(a.scale * O[jn][2], a.scale * O[jn][3]);
    }
  }

  if (seg == a.segs - 1) store_abi_tile(a.ht, a, f, lane, S);
}

// ---- the sequence split: a segment's state contribution -------------------------------
// For long sequences with few heads, where (V slabs × heads) blocks leave SMs idle: the
// chunks split into segments, and a first pass walks each piece of every segment but the
// last from a zero state (pieces shorter than segments, so that this pass fills the GPU
// too), with stages 1–3 only (k̂ and the state), leaving
//   dstate = Σ_n 2^{G[end] − G[chunk n end]}·k̂_nᵀ·v_n     and dgate = G[end] − G[start]
// The walk of segment s then starts from h0 carried across the pieces before it:
// S ← 2^{dgate}·S + dstate, in order.
__global__ void __launch_bounds__(THREADS, 1) chunk_walk_segment_states_kernel(args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const walk_io io(a, sm);
  const int piece = blockIdx.z, n0 = piece * a.sub_chunks, n1 = min(a.NT, n0 + a.sub_chunks);
  const state_rows f(warp, lane);
  const lane_offsets lo(warp, lane);
  float S[8][4] = {};
  float gate_lo = 0.f, gate_hi = 0.f;

  io.load_keyed(static_cast<int64_t>(n0) * C, walk_io::kK | walk_io::kG);
  io.load_values(0, static_cast<int64_t>(n0) * C);
  tc::cp_async_commit();
  const int j = tid >> 6, p = tid & 63;
  for (int n = n0; n < n1; ++n) {
    const int cur = (n - n0) & 1;
    const int64_t t0 = static_cast<int64_t>(n) * C;
    tc::cp_async_wait_all();
    __syncthreads();
    if (n + 1 < n1) {
      io.load_values(cur ^ 1, t0 + C);
      tc::cp_async_commit();
    }
    float l0[SUB], l1[SUB];
    walk_decay_cumsum(smem, j, p, l0, l1);
    __syncthreads();
    walk_prepare_kg(smem, j, p, l0, l1);
    __syncthreads();
    if (n + 1 < n1) {
      io.load_keyed(t0 + C, walk_io::kK | walk_io::kG);
      tc::cp_async_commit();
    }
    walk_state_update(smem, sm, sm + layout::v + cur * layout::tile_v, lo, S, f);
    const float* t = reinterpret_cast<const float*>(smem + layout::tots);
    gate_lo += ((t[f.lo] + t[KP + f.lo]) + t[2 * KP + f.lo]) + t[3 * KP + f.lo];
    gate_hi += ((t[f.hi] + t[KP + f.hi]) + t[2 * KP + f.hi]) + t[3 * KP + f.hi];
  }
  float* ds = split_state(a, piece);
  const int c2 = (lane & 3) << 1;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    *reinterpret_cast<float2*>(ds + f.lo * BV + 8 * jn + c2) = make_float2(S[jn][0], S[jn][1]);
    *reinterpret_cast<float2*>(ds + f.hi * BV + 8 * jn + c2) = make_float2(S[jn][2], S[jn][3]);
  }
  if (blockIdx.x == 0 && (lane & 3) == 0) split_gate(a, piece)[f.lo] = gate_lo, split_gate(a, piece)[f.hi] = gate_hi;
}

}  // namespace glabench::chunked::walk
