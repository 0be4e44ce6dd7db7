// The bf16 forward in one pass: the chunk walk. One block per (V slab of 64 columns,
// head) walks the chunks in order and keeps the K×64 state in registers, as the seed's
// fused_chunk_gla_fwd_kernel does; every stage of a chunk runs inside the walk, on
// mma.sync with fragments in registers:
//
//   stage 1  walk_decay_cumsum   the cumulative log2 gates of each 16-token sub-chunk
//   stage 2  walk_prepare_qg_kg  q̄, q̃, k̄, k̂: the operands with their decays
//   stage 3  walk_state_update   S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v (q̃·S is in walk_combine)
//   stage 4  walk_inner_chunk    A = q̄·k̄ᵀ per sub-chunk row, masked
//   stage 5  walk_combine        o = scale·(q̃·S + A·v), A straight from registers
//
// each in bf16_mma/stageN_*.cuh, on the tiles of bf16_mma/layout.cuh.
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
// Every exponent is a sum of gates in a fixed order, never a difference of cumulative
// sums across sub-chunks. Two places take one inside a sub-chunk, T_j − l[s]: the
// strong-gate features (where 2^{−l} would overflow) and the k̂-only pass
// (walk_prepare_kg). That exponent is off by at most ulp(|T_j|): a relative error of the
// decay near 5e-6 where |T_j| ≤ 64, reaching 1e-3 only where a sub-chunk's gates sum to
// about −10⁴ — still under bf16's rounding. The one factor above 1 is the diagonal block's
// 2^{−l[s]}, bounded by 2^{−T_i}; where a sub-chunk's gates in a feature sum below −kSafeLog2, that
// feature's diagonal block leaves the tensor cores and is summed pair by pair (walk_inner_chunk_
// strong_gates), each pair's decay a sum of its own gates. So a gate of −30 on a token,
// −10⁴ over a chunk, or exactly 0 all stay exact.
//
// A mild chunk — its gates sum to ≥ −kMildLog2 (96) over the chunk in every feature — takes
// one reference for the whole chunk instead, its end: q̄ = q·2^{G − G[C−1]} ≤ |q|·2^96 and
// k̂ = k·2^{G[C−1] − G} ≤ |k| are then the scores' operands for every sub-chunk row, stage 3's
// keys, and (q̄) stage 5's beside the state decayed first: four operand tiles where the
// sub-chunk references write six to eight (walk_prepare_qg_kg_mild). fla's gates and most
// of the cliff's chunks are mild; a strong feature never is.
//
// Precision: the diagonal blocks, whose decays are the weakest and terms the largest, take
// the residual of each operand's bf16 rounding too (q̄_hi·k̄_hi + q̄_lo·k̄_hi + q̄_hi·k̄_lo);
// the scores enter o's products as two bf16 operands, the rounding and its residual
// (A_hi + A_lo); the state as one, its residual worth 0.4–4 % of o's error, 38 % under the
// cliff regime's zero gates (bench/bf16_o_error_model.py).
//
// Long sequences with few heads: chunk_walk_segment_states_kernel below splits the
// sequence (launch.cu: plan_walk_split).
//
// rwkv6 (kBonus, rwkv6_as_gla.hpp): the same walk on q read one token on, each row of o
// written one row on with its bonus added before the one rounding (store_outputs); v's and
// k's next rows arrive by cp.async with v's tile, and the walk takes the bonus itself beside
// stage 1 (walk_bonus_half), so the epilogue reads shared memory.
#pragma once

#include "bf16_mma/layout.cuh"
#include "bf16_mma/split_pieces.cuh"
#include "bf16_mma/stage1_decay_cumsum.cuh"
#include "bf16_mma/stage2_prepare_qg_kg.cuh"
#include "bf16_mma/stage3_state.cuh"
#include "bf16_mma/stage4_inner_chunk.cuh"
#include "bf16_mma/stage5_combine.cuh"

namespace glabench::chunked::walk {

// Stages 4 and 5 for the warp's row sub-chunk MT: the scores, then o into registers.
template <int MT>
__device__ __forceinline__ void walk_outputs(const unsigned char* smem, uint32_t sm,
                                             uint32_t v_tile, const lane_offsets& lo, int lane,
                                             bool mild, bool strong_chunk, float (&O)[4][4]) {
  float A[8][4];
  walk_inner_chunk<MT>(smem, sm, lo, lane, mild, strong_chunk, A);
  walk_combine<MT>(sm, v_tile, lo, mild, A, O);
}

// rwkv6: half of the bonus of the chunk's rows one on, β[t] = scale·r_{t+1}·(u ⊙ k_{t+1}),
// t = 0 … C − 1, unscaled: the sum over the warp's half of K (the caller adds the halves and
// scales, into the slot beside v buffer `cur` that store_outputs reads). Thread (j, p) of
// stages 1–2 sums its feature pair over sub-chunk j's 16 rows — r_{t+1} the q tile's row t (q
// read one token on), k_{t+1} the k tile's next row, past the tile the row load_values staged
// beside v buffer `cur` (at `next`) — and its warp's 32 pairs by sum_rows: lanes 2i and
// 2i + 1 hold row 16j + i's sum. u2: the thread's pair of u.
__device__ __forceinline__ float walk_bonus_half(const unsigned char* smem, uint32_t next, int j,
                                                 int p, float2 u2) {
  float acc[SUB];
#pragma unroll
  for (int t = 0; t < SUB; ++t) {
    const int row = SUB * j + t;
    const float2 q = pair_at(smem, layout::q + pair_offset(row, p));
    const float2 k = row + 1 < C ? pair_at(smem, layout::k + pair_offset(row + 1, p))
                                 : pair_at(smem, next + layout::next_k + 4 * p);
    acc[t] = fmaf(q.x * u2.x, k.x, q.y * u2.y * k.y);
  }
  return sum_rows(acc, threadIdx.x & 31);
}

// o of the lane's rows row and row + 8 of the chunk at t0, columns col + c2 + 8·jn of the
// slab (c2: the lane's column pair), scaled. rwkv6 (args::u): the walk's row r is o's
// row r + 1 less its bonus, bonus·v_{r+1}, added before the one rounding from what
// walk_bonus_half and load_values left beside v buffer `cur`; o's row 0 is the caller's.
template <bool kNarrow, bool kBonus>
__device__ __forceinline__ void store_outputs(const args& a, const walk_io& io, unsigned char* smem,
                                              int cur, int64_t t0, int row, int col, int c2,
                                              const float (&O)[4][4]) {
  const int shift = kBonus ? 1 : 0;
  const uint32_t next = layout::next + cur * layout::tile_next;
  float beta[2] = {0.f, 0.f};
  if (kBonus) {
    beta[0] = at<float>(smem, next + layout::next_bonus + 4 * row);
    beta[1] = at<float>(smem, next + layout::next_bonus + 4 * (row + 8));
  }
#pragma unroll
  for (int jn = 0; jn < 4; ++jn) {
    // Past V: whole 8-column groups (V % 8 = 0), else pair by pair (V even).
    if (io.v0 + col + 8 * jn + (kNarrow ? c2 : 0) >= a.V) break;
    const int cc = col + c2 + 8 * jn;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row + 8 * h + shift;  // o's row in the chunk: C is the next chunk's first
      if (t0 + r >= a.T) continue;
      float o0 = a.scale * O[jn][2 * h], o1 = a.scale * O[jn][2 * h + 1];
      if (kBonus) {
        const uint32_t v_at = r < C
                                  ? layout::v + cur * layout::tile_v + tc::swizzle_elem<VROW>(r, cc)
                                  : next + 2 * cc;
        const float2 v = __bfloat1622float2(at<__nv_bfloat162>(smem, v_at));
        o0 += beta[h] * v.x, o1 += beta[h] * v.y;
      }
      *reinterpret_cast<uint32_t*>(a.o + io.o_at + (t0 + r) * io.vs + cc) = tc::pack_bf16(o0, o1);
    }
  }
}

// ---- the walk ------------------------------------------------------------------------
// kBonus: rwkv6's walk, args::u set.
template <bool kNarrow, bool kBonus>
__global__ void __launch_bounds__(THREADS, 1) chunk_walk_bf16_kernel(args a) {
  // rwkv6's narrow walk takes stage 2 with the strong selects on every chunk that is not
  // mild. With the selects' folded copy besides, its code is 132 KB, the one walk past
  // 128 KiB (115 KB without), and the blocks that met a strong feature ran slowest: H100,
  // strong fwd −6 to −8 % at B4 / B2 T1024 H4 D100, −1.7 to +0.8 % at T 2048 and 8192. The
  // other walks keep the copy: one stage 2 there cost 0–3 % under strong gates.
  // (reports/2026-12-06-h100-walks-strong-feature-code)
  constexpr bool kGeneralStage2 = kNarrow && kBonus;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const walk_io io(a, sm, kNarrow);
  const int seg = blockIdx.z, n0 = seg * a.seg_chunks, n1 = min(a.NT, n0 + a.seg_chunks);

  const state_rows f(warp, lane);
  const lane_offsets lo(warp, lane);
  const int c2 = (lane & 3) << 1;
  // The state before chunk n0: h0, carried over the pieces before the segment.
  float S[8][4];
  load_abi_tile(a.h0, a, f, lane, S);
  for (int m = 0; m < seg * a.subs; ++m) carry_over_piece(a, m, f, lane, S);

  io.load_keyed<kBonus>(static_cast<int64_t>(n0) * C, walk_io::kQ | walk_io::kK | walk_io::kG);
  io.load_values<kBonus>(0, static_cast<int64_t>(n0) * C);
  tc::cp_async_commit();
  if (tid == 0) at<int>(smem, layout::flag) = 0, at<int>(smem, layout::steep) = 0;

  // Stages 1–2: sub-chunk j, feature pair p. Sub-chunk j writes 3 − j rows of the later
  // sub-chunks' keys; warps w and w+4 share a scheduler, so each pairs j = 0 with 3 or 1
  // with 2 (warps 0–1: j = 0, 2–3: 1, 4–5: 3, 6–7: 2).
  const int j = (0x2310 >> (4 * (warp >> 1))) & 3, p = tid & 63;
  // Stages 4–5: the warp's sub-chunk rows and column half. Row sub-chunk mt costs more
  // the larger mt; warps w and w+4 share a scheduler, so each pairs mt = 0 with 3 or 1
  // with 2.
  const int mt = (0x22331100 >> (4 * warp)) & 3, half = warp & 1;
  // rwkv6: the thread's pair of u (features 2p, 2p + 1; zero past K, a multiple of 4).
  float2 u2 = make_float2(0.f, 0.f);
  if (kBonus && 2 * p < a.K)
    u2 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(io.u + 2 * p));
  for (int n = n0; n < n1; ++n) {
    const int cur = (n - n0) & 1;
    const int64_t t0 = static_cast<int64_t>(n) * C;
    const uint32_t v_tile = sm + layout::v + cur * layout::tile_v;
    tc::cp_async_wait_all();
    __syncthreads();  // chunk n has landed; chunk n−1 is done with every buffer
    if (n + 1 < n1) {
      io.load_values<kBonus>(cur ^ 1, t0 + C);
      tc::cp_async_commit();
    }
    // S's operand beside stage 1's latency-bound sums; a mild chunk rewrites it decayed.
    walk_state_to_shared(smem, S, f, lane);
    reinterpret_cast<float4*>(smem + layout::corr)[tid] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (tid == 0) at<int>(smem, layout::flag + 4 * (cur ^ 1)) = 0;
    if (tid == 32) at<int>(smem, layout::steep + 4 * (cur ^ 1)) = 0;

    float l0[SUB], l1[SUB];
    walk_decay_cumsum(smem, j, p, l0, l1);
    // rwkv6: the bonus's sums over each K half; the odd warp of a sub-chunk's pair stores its
    // half before the barrier below, the even one adds its own after it, in that order.
    float bonus = 0.f;
    const uint32_t next = layout::next + cur * layout::tile_next;
    float* bonus_at = reinterpret_cast<float*>(smem + next + layout::next_bonus) + SUB * j +
                      ((lane >> 1) & (SUB - 1));
    if constexpr (kBonus) {
      bonus = walk_bonus_half(smem, next, j, p, u2);
      if ((warp & 1) && !(lane & 1)) *bonus_at = bonus;
    }
    const bool strong0 = strong_feature(l0[SUB - 1]), strong1 = strong_feature(l1[SUB - 1]);
    if (strong0 || strong1) at<int>(smem, layout::flag + 4 * cur) = 1;
    if (!(l0[SUB - 1] >= -kMildSubLog2 && l1[SUB - 1] >= -kMildSubLog2))
      at<int>(smem, layout::steep + 4 * cur) = 1;  // not mild
    // totals and flags written
    const bool quick =
        __syncthreads_and(l0[SUB - 1] >= -kMildLog2 / 4 && l1[SUB - 1] >= -kMildLog2 / 4);
    if (kBonus && !(warp & 1) && !(lane & 1)) *bonus_at = a.scale * (bonus + *bonus_at);
    const bool strong_chunk = at<int>(smem, layout::flag + 4 * cur) != 0;
    // Otherwise the chunk's sums decide, past one more barrier, where no sub-chunk is steep
    // (block-uniform).
    const bool mild = quick || (at<int>(smem, layout::steep + 4 * cur) == 0 &&
                                __syncthreads_and(chunk_gate_sum(smem, 2 * p) >= -kMildLog2 &&
                                                  chunk_gate_sum(smem, 2 * p + 1) >= -kMildLog2));
    if (mild) {  // on the chunk end's reference
      decay_state(smem, S, f);
      walk_state_to_shared(smem, S, f, lane);
      walk_prepare_qg_kg_mild(smem, j, p, l0, l1);
    } else if (!strong_chunk && !kGeneralStage2) {  // the common case, its selects folded away
      walk_prepare_qg_kg(smem, j, p, l0, l1, false, false);
    } else {
      walk_prepare_qg_kg(smem, j, p, l0, l1, strong0, strong1);
      if (__any_sync(0xffffffffu, strong0 || strong1))
        walk_inner_chunk_strong_gates(smem, j, p, strong0, strong1);
    }
    __syncthreads();  // operands written; q, k and g read
    if (n + 1 < n1) {
      io.load_keyed<kBonus>(t0 + C, walk_io::kQ | walk_io::kK | walk_io::kG);
      tc::cp_async_commit();
    }

    float O[4][4];
    switch (mt) {  // warp-uniform
      case 0:
        walk_outputs<0>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O);
        break;
      case 1:
        walk_outputs<1>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O);
        break;
      case 2:
        walk_outputs<2>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O);
        break;
      default:
        walk_outputs<3>(smem, sm, v_tile, lo, lane, mild, strong_chunk, O);
        break;
    }
    if (mild)  // its decay was before stage 5
      add_keys_values(sm + layout::khat, v_tile, lo, S);
    else
      walk_state_update(smem, sm, v_tile, lo, S, f);
    store_outputs<kNarrow, kBonus>(a, io, smem, cur, t0, 16 * mt + (lane >> 2), 32 * half, c2, O);
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
template <bool kNarrow>
__global__ void __launch_bounds__(THREADS, 1) chunk_walk_segment_states_kernel(args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const walk_io io(a, sm, kNarrow);
  const int piece = blockIdx.z;
  const chunk_span span = state_piece(piece, a.sub_chunks, a.NT);
  const int n0 = span.first, n1 = span.last;
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
    gate_lo += chunk_gate_sum(smem, f.lo);
    gate_hi += chunk_gate_sum(smem, f.hi);
  }
  store_piece(a, piece, f, lane, S, gate_lo, gate_hi);
}

}  // namespace glabench::chunked::walk
