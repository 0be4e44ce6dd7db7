// Stage 2 of the chunk walk — the seed's `prepare_qg_kg`: the tensor-core operands with
// their decays, relative to the references ../forward_bf16_mma.cuh's header derives: per sub-chunk
// (walk_prepare_qg_kg), one for the whole chunk where its gates are mild
// (walk_prepare_qg_kg_mild), k̂ alone for the sequence split's first pass and the
// backward's state walk (walk_prepare_kg), q̃ alone for the backward's dS walk
// (walk_prepare_qg), and the gradient walk's operands (walk_prepare_grads).
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk {

// ---- stage 2: prepare_qg_kg ----------------------------------------------------------
// Thread (j, p) writes its 16 tokens × 2 features of q̄ (and its residual), q̃, k̄⁽ʲ⁾ (and
// its residual) … k̄⁽³⁾ and k̂. `strong0/1`: the sub-chunk's gates in this feature sum
// below −kSafeLog2, so its diagonal block is left to walk_inner_chunk_strong_gates
// (k̄⁽ʲ⁾ = 0 there) and its keys decay to the sub-chunk's end by one exponential,
// 2^{T_j − l}, as 2^{−l}·2^{T_j} would overflow. Inlined with both false (a chunk without
// strong features), the selects and their exponentials, a third of them, drop out.
__device__ __forceinline__ void walk_prepare_qg_kg(unsigned char* smem, int j, int p,
                                                   const float (&l0)[SUB], const float (&l1)[SUB],
                                                   bool strong0, bool strong1) {
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
  const float eG0 = tc::ex2(G0), eG1 = tc::ex2(G1);
  // F[i] = 2^{T_j + T_{j+1} + … + T_{i−1}} for i > j (i = SUBS: the chunk's end, k̂), the
  // factor from k̄⁽ʲ⁾ = k·2^{−l} to k̄⁽ⁱ⁾; a strong feature's keys start from k·2^{T_j − l}
  // instead, so its F leaves T_j out.
  float F0[SUBS + 1], F1[SUBS + 1];
  {
    float a0 = strong0 ? 0.f : tj0, a1 = strong1 ? 0.f : tj1;
#pragma unroll
    for (int i = 1; i <= SUBS; ++i) {
      if (i - 1 > j) a0 += T0[i - 1], a1 += T1[i - 1];
      F0[i] = tc::ex2(a0);
      F1[i] = tc::ex2(a1);
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
    const float kb0 = k.x * tc::ex2(-l0[u]), kb1 = k.y * tc::ex2(-l1[u]);
    tc::split_bf16(strong0 ? 0.f : kb0, strong1 ? 0.f : kb1, hi, lo);
    at<uint32_t>(smem, layout::kbar + kbar_row0(j) * KROW + off) = hi;
    at<uint32_t>(smem, layout::kdiag_lo + off) = lo;
    const float kf0 = strong0 ? k.x * tc::ex2(tj0 - l0[u]) : kb0;
    const float kf1 = strong1 ? k.y * tc::ex2(tj1 - l1[u]) : kb1;
#pragma unroll
    for (int i = 1; i < SUBS; ++i)
      if (i > j)
        at<uint32_t>(smem, layout::kbar + kbar_row0(i) * KROW + off) =
            tc::pack_bf16(kf0 * F0[i], kf1 * F1[i]);
    at<uint32_t>(smem, layout::khat + off) = tc::pack_bf16(kf0 * F0[SUBS], kf1 * F1[SUBS]);
  }
}

// Stage 2 for a mild chunk, whose gates sum to ≥ −kMildLog2 over the chunk in every
// feature: one reference for the whole chunk, its end G[C−1]. For token t of sub-chunk j,
// x[t] = l[t] − (T_j + … + T_3) = G[t] − G[C−1] ≥ 0, its exponent a sum of gates:
//   q̄[t] = q[t]·2^{x[t]} ≤ |q|·2^{kMildLog2}  (hi and lo) the scores' query operand for every
//                                         sub-chunk row, and stage 5's against the state
//                                         decayed to the chunk's end (decay_state)
//   k̂[s] = k[s]·2^{−x[s]} ≤ |k|               (hi in khat, lo in kdiag_lo) the scores' key
//                                         operand, and stage 3's
// q̄·k̂ᵀ holds 2^{x[t] − x[s]} ≤ 1 where s ≤ t; the last token's k̂ is k itself. A chunk with a
// strong feature is never mild (a sub-chunk below −kSafeLog2 ≤ −kMildLog2).
__device__ __forceinline__ void walk_prepare_qg_kg_mild(unsigned char* smem, int j, int p,
                                                        const float (&l0)[SUB],
                                                        const float (&l1)[SUB]) {
  float R0 = 0.f, R1 = 0.f;
#pragma unroll
  for (int m = 0; m < SUBS; ++m)
    if (m >= j) {
      R0 -= at<float>(smem, layout::tots + (m * KP + 2 * p) * 4);
      R1 -= at<float>(smem, layout::tots + (m * KP + 2 * p + 1) * 4);
    }
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const uint32_t off = pair_offset(SUB * j + u, p);
    const float2 q = pair_at(smem, layout::q + off), k = pair_at(smem, layout::k + off);
    const float x0 = R0 + l0[u], x1 = R1 + l1[u];
    uint32_t hi, lo;
    tc::split_bf16(q.x * tc::ex2(x0), q.y * tc::ex2(x1), hi, lo);
    at<uint32_t>(smem, layout::qbar + off) = hi;
    at<uint32_t>(smem, layout::qbar_lo + off) = lo;
    tc::split_bf16(k.x * tc::ex2(-x0), k.y * tc::ex2(-x1), hi, lo);
    at<uint32_t>(smem, layout::khat + off) = hi;
    at<uint32_t>(smem, layout::kdiag_lo + off) = lo;
  }
}

// Stage 2 of the split's first pass and the backward's state walk: k̂ alone, k[s]·2^{T_j −
// l[s]}·2^{T_{j+1} + … + T_3}.
__device__ __forceinline__ void walk_prepare_kg(unsigned char* smem, int j, int p,
                                                const float (&l0)[SUB], const float (&l1)[SUB]) {
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

// Stage 2 of the dS walk: the queries decayed from the chunk's start and scaled,
// q̃[t] = scale·q[t]·2^{Γ_j + l[t]} (exponent a sum of gates, ≤ 0), into the tile that
// walk_state_update reads as its key operand.
__device__ __forceinline__ void walk_prepare_qg(unsigned char* smem, int j, int p,
                                                const float (&l0)[SUB], const float (&l1)[SUB],
                                                float scale) {
  float G0 = 0.f, G1 = 0.f;
#pragma unroll
  for (int m = 0; m < SUBS; ++m)
    if (m < j) {
      G0 += at<float>(smem, layout::tots + (m * KP + 2 * p) * 4);
      G1 += at<float>(smem, layout::tots + (m * KP + 2 * p + 1) * 4);
    }
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const uint32_t off = pair_offset(SUB * j + u, p);
    const float2 q = pair_at(smem, layout::q + off);
    at<uint32_t>(smem, layout::khat + off) =
        tc::pack_bf16(scale * q.x * tc::ex2(G0 + l0[u]), scale * q.y * tc::ex2(G1 + l1[u]));
  }
}

// Stage 2 of the gradient walk (../backward_bf16_mma_grads.cuh): a reference at each sub-chunk's
// start, as the forward's. For token t of sub-chunk j, with l[t] ≤ 0 its log2 gates summed from the
// sub-chunk's start and T_j their total:
//   q̄[t] = q[t]·2^{l[t]}  ≤ |q|          (hi and lo: the residual in place of q)
//   k̄[t] = k[t]·2^{−l[t]} ≤ |k|·2^{−T_j}  (hi and lo: the residual in place of k)
//   k̆[t] = k[t]·2^{T_j − l[t]} ≤ |k|     (decayed to the sub-chunk's end)
// and l itself (fp32) for the gradients' own decays. The threads of sub-chunk 0 also write
// 2^{T_m} and the gates before each sub-chunk, Γ_m = T_0 + … + T_{m−1} (Γ_4 = G[C−1]),
// summed in that order. Only for chunks walk_grads_listing does not leave whole. A strong
// feature (T_j < −kSafeLog2) gets k̄ = 0 and its bit in the sub-chunk's row of `strong`
// (zeroed before), so that k̄ ≤ |k|·2^96 everywhere.
__device__ __forceinline__ void walk_prepare_grads(unsigned char* smem, int j, int p,
                                                   const float (&l0)[SUB], const float (&l1)[SUB]) {
  using L = grads_layout;
  if (j == 0) {
    float G0 = 0.f, G1 = 0.f;
#pragma unroll
    for (int m = 0; m < SUBS; ++m) {
      const float2 t = make_float2(at<float>(smem, L::tots + (m * KP + 2 * p) * 4),
                                   at<float>(smem, L::tots + (m * KP + 2 * p + 1) * 4));
      at<float2>(smem, L::gam + (m * KP + 2 * p) * 4) = make_float2(G0, G1);
      at<float2>(smem, L::etots + (m * KP + 2 * p) * 4) = make_float2(tc::ex2(t.x), tc::ex2(t.y));
      G0 += t.x, G1 += t.y;
    }
    at<float2>(smem, L::gam + (SUBS * KP + 2 * p) * 4) = make_float2(G0, G1);
  }
  const float T0 = l0[SUB - 1], T1 = l1[SUB - 1];
  const bool strong0 = strong_feature(T0), strong1 = strong_feature(T1);
  mark_strong_pair(reinterpret_cast<unsigned*>(smem + L::strong) + j * (KP / 32), p, strong0,
                   strong1);
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const int t = SUB * j + u;
    const uint32_t off = pair_offset(t, p);
    const float2 q = pair_at(smem, L::q + off), k = pair_at(smem, L::k + off);
    at<float2>(smem, L::l + (t * L::GLD + 2 * p) * 4) = make_float2(l0[u], l1[u]);
    uint32_t hi, lo;
    tc::split_bf16(q.x * tc::ex2(l0[u]), q.y * tc::ex2(l1[u]), hi, lo);
    at<uint32_t>(smem, L::qbar + off) = hi;
    at<uint32_t>(smem, L::qbar_lo + off) = lo;
    tc::split_bf16(strong0 ? 0.f : k.x * tc::ex2(-l0[u]), strong1 ? 0.f : k.y * tc::ex2(-l1[u]), hi,
                   lo);
    at<uint32_t>(smem, L::kbar + off) = hi;
    at<uint32_t>(smem, L::kbar_lo + off) = lo;
    at<uint32_t>(smem, L::kend + off) =
        tc::pack_bf16(k.x * tc::ex2(T0 - l0[u]), k.y * tc::ex2(T1 - l1[u]));
  }
}

}  // namespace glabench::chunked::walk
