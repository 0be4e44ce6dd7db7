// Backward, row layout: each thread keeps RJ rows of a V-strip — first of the state S,
// walking forward, then of the adjoint G, walking back — so that every Σ_j is in-thread
// FMAs plus a shuffle reduction over its NL lanes, done once per chunk.
//
// Forward walk (S = S_{t-1} on entry):
//   hist_t = a_t ⊙ (S do_t),  dq_t = scale (hist_t + k_t (v_t·do_t)),  S ← a_t S + k_tᵀ v_t
// Reverse walk (G' = the adjoint reaching S_t from later tokens; G' = dht at t = T−1):
//   fut_t = G' v_t,  dk_t = scale q_t (v_t·do_t) + fut_t,  G' ← a_t (G' + scale q_tᵀ do_t)
// v·do comes from token_dot_kernel. Both walks run chunk-rescaled (row_stage.cuh): the
// forward walk keeps U with S_τ = e^{b_τ} ⊙ U_τ, so hist_τ = e^{b_τ} (U_{τ−1} do_τ) and
// U += k̃ᵀv; the reverse walk keeps W with G'_τ = e^{−b_τ} ⊙ W_τ, so fut_τ = e^{−b_τ} (W v_τ)
// and W += q̃ᵀdo — two FMAs per state element and token in each walk.
//
// dg without division and without cancellation. With b_t = Σ_{r≤t} g_r,
// dg_t = Σ_{r≥t} ∂L/∂b_r and ∂L/∂b_r = q_r⊙dq_r − k_r⊙dk_r (+ dht⊙ht at r = T−1).
// Formed as written, the diagonal parts q_r⊙k_r(v_r·do_r) of the two products are
// O(1) and cancel, which leaves nothing of a tiny dg (g = −30: dg ≈ 1e-13). They are
// equal by construction, so we never form them:
//   ∂L/∂b_r = scale q_r⊙hist_r − k_r⊙fut_r                  (r < T−1)
//   ∂L/∂b_r = scale q_r⊙hist_r + a_r⊙rowsum(dht ⊙ S_before)  (r = T−1, S_before the state
//             before the last token: −k⊙fut and
//             the k_rᵀv_r part of dht⊙ht cancel the same way)
// Every summand carries its decay factor, so dg keeps its relative precision. The
// forward walk stores the hist part per (t, row) in the workspace; the reverse walk
// adds the fut part and keeps the running suffix sum.
//
// rwkv6 (OP). o_r reads S_{r−1} plus the bonus u⊙k_r v_r, so a pair (s, r) with s < r
// (s = −1: h0; r = T: dht) is decayed by g_t exactly when s < t < r, and
//   dw_t = Σ_{r>t} A'_r − Σ_{s≥t} B'_s,   A'_r = scale q_r⊙hist'_r,  B'_s = k_s⊙fut'_s,
//   hist'_r = e^{g_{r−1}} S_{r−2} do_r,   fut'_s = e^{g_{s+1}} G'_{s+1} v_s,
// where G'_s is the adjoint reaching S_s from later tokens: the undecayed pair (r−1, r),
// which would cancel between the two sums, is left out of both. So each walk adds a
// token's own term one token late — the forward walk's token τ adds k_{τ−1}ᵀv_{τ−1} after
// taking U · do_τ, the reverse walk's adds scale q_{τ+1}ᵀdo_{τ+1} after taking W · v_τ
// (row_stage stages the neighbours) — and the left-out pair joins dq and dk alone:
//   dq_τ = scale (hist'_τ + k_{τ−1} (v_{τ−1}·do_τ) + u⊙k_τ (v_τ·do_τ))
//   dk_τ = fut'_τ + scale q_{τ+1} (v_τ·do_{τ+1}) + scale u⊙q_τ (v_τ·do_τ)
// A'_τ goes to the workspace at τ − 1, dht's term e^{g_{T−1}} rowsum(dht ⊙ S_{T−2}) at
// T − 1 (where B'_{T−1}, dht's own pair, is left out), so dw_t is the same suffix sum
// of per-token terms as gla's dg. du_i = Σ scale q_τ[i] k_τ[i] (v_τ·do_τ) is summed per
// sequence in the reverse walk, in token order, then over the batch by du_kernel.
#pragma once

#include <type_traits>

#include "row_stage.cuh"

namespace glabench::parallel_scan {

// v·do of every token into the workspace (one warp a token), for dq and dk; rwkv6 also
// v_{t−1}·do_t (0 at t = 0).
template <recurrence OP, typename Elem>
__global__ void __launch_bounds__(256) token_dot_kernel(scan_args a) {
  using C = compute_t<Elem>;
  const int64_t token = int64_t(blockIdx.x) * 8 + threadIdx.x / 32;  // token row · H + h
  const int lane = threadIdx.x % 32;
  if (token >= batch_tokens(a) * a.H) return;  // whole warps
  const Elem *v = static_cast<const Elem*>(a.v) + token * a.V,
             *d_o = static_cast<const Elem*>(a.d_o) + token * a.V;
  C sum = C(0);
  for (int j = lane; j < a.V; j += 32) sum += to_compute<C>(v[j]) * to_compute<C>(d_o[j]);
  sum = group_sum<32>(sum);
  if (lane == 0) token_dots<C>(a)[token] = sum;
  if constexpr (OP == recurrence::rwkv6) {
    const bool first = starts_sequence(a, token / a.H);
    const Elem* v_before = v - a.H * a.V;
    C cross = C(0);
    if (!first)
      for (int j = lane; j < a.V; j += 32)
        cross += to_compute<C>(v_before[j]) * to_compute<C>(d_o[j]);
    cross = group_sum<32>(cross);
    if (lane == 0) cross_dots<C>(a)[token] = cross;
  }
}

// rwkv6: du[h][i] = Σ_b of the per-sequence sums, b in order (deterministic).
template <typename Elem>
__global__ void __launch_bounds__(256) du_kernel(scan_args a) {
  using C = compute_t<Elem>;
  const int64_t n = int64_t(blockIdx.x) * 256 + threadIdx.x;  // h·K + i
  if (n >= a.H * a.K) return;
  const C* partial = du_partials<C>(a);
  C sum = C(0);
  for (int64_t b = 0; b < a.B; ++b) sum += partial[b * a.H * a.K + n];
  static_cast<Elem*>(a.du)[n] = to_storage<Elem>(sum);
}

// part[tt·RJ + r] += Σ_e x[r][e] y[e]: the in-thread share of a row's dot with a
// V-vector, in two interleaved sums that halve the FMA chain.
template <int N, int RJ, int L, typename C>
__device__ __forceinline__ void add_row_dots(C (&part)[N], int tt, const C (&x)[RJ][L],
                                             const C (&y)[L]) {
  C odd[RJ];
#pragma unroll
  for (int r = 0; r < RJ; ++r) odd[r] = C(0);
#pragma unroll
  for (int e = 0; e < L; ++e)
#pragma unroll
    for (int r = 0; r < RJ; ++r) (e % 2 ? odd[r] : part[tt * RJ + r]) += x[r][e] * y[e];
#pragma unroll
  for (int r = 0; r < RJ; ++r) part[tt * RJ + r] += odd[r];
}

// The forward walk over one staged chunk `buf` of the row stage, for the thread's RJ
// rows (n0 …, of the block) and its V-strip (lane): per token τ, part[τ·RJ + r] gets the
// in-thread share of U_{τ−1} · do_τ, then U += k̃ᵀv — or, STEP (a chunk taken step by
// step), U = a U + kᵀv. A rescaled chunk ends with U → S. At token save_tt (the last
// token T − 1 where dht is present; TC: none) the U before it goes to saved_u, strided
// by THREADS, for dg's dht term.
template <typename stage, bool STEP, int THREADS, typename C, int RJ, int L, int N>
__device__ __forceinline__ void forward_walk(const C* buf, int lane, int n0, int save_tt,
                                             C* saved_u, C (&U)[RJ][L], C (&part)[N]) {
  constexpr int TC = N / RJ, kStride = stage::layout::kStride;
#pragma unroll
  for (int tt = 0; tt < TC; ++tt) {
    C v[L], d_o[L];
    load_strip<L>(stage::vec(buf, 0, tt) + lane * kStride, v);
    load_strip<L>(stage::vec(buf, 1, tt) + lane * kStride, d_o);
    auto save = [&] {
      if (tt == save_tt) {  // once per kernel, uniform across the block
#pragma unroll
        for (int r = 0; r < RJ; ++r)
#pragma unroll
          for (int e = 0; e < L; ++e) saved_u[(r * L + e) * THREADS] = U[r][e];
      }
    };
    if constexpr (!stage::kRwkv6) save();
    add_row_dots(part, tt, U, d_o);
#pragma unroll
    for (int r = 0; r < RJ; ++r) {
      const C kk = stage::scalars(buf, stage::kKK, tt)[n0 + r];
      if constexpr (STEP) {
        const C ar = stage::scalars(buf, stage::kA, tt)[n0 + r];
#pragma unroll
        for (int e = 0; e < L; ++e) U[r][e] = ar * U[r][e] + kk * v[e];
      } else {
#pragma unroll
        for (int e = 0; e < L; ++e) U[r][e] += kk * v[e];
      }
    }
    if constexpr (stage::kRwkv6) save();  // U after token T − 2's term (the delayed update)
  }
  if constexpr (!STEP) stage::scale_by_beta(U, buf, n0);  // U → S at the chunk's end
}

// The reverse walk over one staged chunk, tokens last to first: a rescaled chunk first
// turns G' into W; then per token τ, part[τ·RJ + r] gets the in-thread share of W_τ · v_τ
// (W before token τ's own term), then W += q̃ᵀdo — or, STEP, G' = a (G' + scale qᵀdo).
template <typename stage, bool STEP, typename C, int RJ, int L, int N>
__device__ __forceinline__ void reverse_walk(const C* buf, int lane, int n0, C (&W)[RJ][L],
                                             C (&part)[N]) {
  constexpr int TC = N / RJ, kStride = stage::layout::kStride;
  if constexpr (!STEP) stage::scale_by_beta(W, buf, n0);  // G' → W, before its tokens
#pragma unroll
  for (int tt = TC - 1; tt >= 0; --tt) {
    C v[L], d_o[L];
    load_strip<L>(stage::vec(buf, 0, tt) + lane * kStride, v);
    load_strip<L>(stage::vec(buf, 1, tt) + lane * kStride, d_o);
    add_row_dots(part, tt, W, v);
#pragma unroll
    for (int r = 0; r < RJ; ++r) {
      const C qq = stage::scalars(buf, stage::kQQ, tt)[n0 + r];
      if constexpr (STEP) {
        const C ar = stage::scalars(buf, stage::kA, tt)[n0 + r];
#pragma unroll
        for (int e = 0; e < L; ++e) W[r][e] = ar * (W[r][e] + qq * d_o[e]);
      } else {
#pragma unroll
        for (int e = 0; e < L; ++e) W[r][e] += qq * d_o[e];
      }
    }
  }
}

template <recurrence OP, typename Elem, int NL, int L, int RJ, int TC, int THREADS>
__global__ void __launch_bounds__(THREADS) backward_dq_dk_dg_kernel(scan_args a) {
  using stage = row_stage<OP, Elem, NL, L, RJ, TC, THREADS>;
  constexpr bool kRwkv6 = OP == recurrence::rwkv6;
  using C = typename stage::C;
  const double_buffer<C, stage::kBufferValues> buffer;
  // Past the two buffers: the groups' dg terms [group][TC][RJ] in the reverse walk; in
  // the forward walk each thread's U before the last token (strided by thread).
  C* scratch = buffer(0) + 2 * stage::kBufferValues;
  C* saved_u = scratch + threadIdx.x;

  const thread_place<NL> at(a);
  const int lane = at.lane, group = at.group, n0 = group * RJ;  // n0: first row in the block
  const int64_t h = at.h, state0 = at.state0;
  const int64_t row0 = int64_t(blockIdx.x) * stage::kRows, i0 = row0 + n0;
  const C scale = static_cast<C>(a.scale);
  C* pdb_out = partial_db<C>(a);
  const typename stage::cursor where = stage::make_cursor(a, at.seq, h, row0);
  const Elem* dht = static_cast<const Elem*>(a.dht);
  // The sequence's length is the cursor's (where.T) and its first key row key0, rather than
  // more 64-bit values kept through the walks (with them, the bf16 row kernels spilled).
  const int64_t chunks = (where.T + TC - 1) / TC;
  auto row_scalar = [&](const C* buf, int which, int tt, int r) {
    return stage::scalars(buf, which, tt)[n0 + r];
  };
  // Element (the sequence's token chunk·TC, h, i0) of a [B,T,H,K] tensor; token tt, row r
  // of the chunk is step_k·tt + r further.
  const int step_k = int(a.H * a.K);
  const int64_t key0 = (at.seq.bos * a.H + h) * a.K + i0;
  auto chunk_key = [&](int64_t chunk) { return key0 + chunk * TC * step_k; };
  const int rows_in = int(a.K - i0 < RJ ? a.K - i0 : RJ);  // the thread's rows before K
  // The chunk's tokens before T, and the place of the last token T − 1 (TC: not in it).
  auto tokens_in = [&](int64_t chunk) {
    return int(where.T - chunk * TC < TC ? where.T - chunk * TC : TC);
  };
  auto last_place = [&](int64_t chunk) {
    return int(where.T - 1 - chunk * TC < TC ? where.T - 1 - chunk * TC : TC);
  };
  // rwkv6: the bonus of the thread's row r (read where a writer needs it; L1-cached).
  auto bonus_u = [&](int r) {
    return to_compute<C>(static_cast<const Elem*>(a.u)[h * a.K + i0 + r]);
  };

  // ---- forward walk: dq and the hist part of ∂L/∂b ----
  C U[RJ][L], last[RJ];  // last: rowsum(dht ⊙ U) before the last token
  stage::load_state(static_cast<const Elem*>(a.h0), U, a, state0, lane, i0);
#pragma unroll
  for (int r = 0; r < RJ; ++r) last[r] = C(0);
  auto commit_forward = [&](const typename stage::prefetch& p, C* buf) {
    stage::template commit<false>(p, buf, scale, where);
  };
  auto load_forward = [&](typename stage::prefetch& p, int64_t chunk) {
    stage::load(p, a, where, chunk * TC, false);
  };
  pipelined_chunks<typename stage::prefetch>(
      chunks, buffer, load_forward, commit_forward, [&](int64_t chunk, const C* buf) {
        const int last_tt = last_place(chunk), save_tt = dht ? last_tt : TC;
        C part[TC * RJ];  // U_{τ−1} · do_τ per token and row, reduced once per chunk
#pragma unroll
        for (int m = 0; m < TC * RJ; ++m) part[m] = C(0);
        walk_chunk(stage::stepwise(buf, n0), [&](auto step_by_step) {
          forward_walk<stage, decltype(step_by_step)::value, THREADS>(buf, lane, n0, save_tt,
                                                                      saved_u, U, part);
        });
        if (save_tt < TC) {  // the last token's rowsum(dht ⊙ U_{T−2}), from saved_u
          C D[RJ][L];
          stage::load_state(dht, D, a, state0, lane, i0);
#pragma unroll
          for (int r = 0; r < RJ; ++r) {
#pragma unroll
            for (int e = 0; e < L; ++e) last[r] += D[r][e] * saved_u[(r * L + e) * THREADS];
            last[r] = group_sum<NL>(last[r]);
          }
        }
        const int64_t key = chunk_key(chunk);
        Elem* dq_chunk = static_cast<Elem*>(a.dq) + key;
        C* pdb_chunk = pdb_out + key;
        const int tokens = tokens_in(chunk);
        reduce_scatter<NL>(part, lane, [&](int m, C sum) {
          const int tt = m / RJ, r = m % RJ, at = tt * step_k + r;
          if (tt >= tokens || r >= rows_in) return;
          if constexpr (kRwkv6) {
            const C hist = row_scalar(buf, stage::kEB, tt, r) * sum;  // hist'_τ
            const C vdo = stage::vdo(buf, tt), q = row_scalar(buf, stage::kQRaw, tt, r);
            dq_chunk[at] = to_storage<Elem>(
                scale * (hist + row_scalar(buf, stage::kKPrev, tt, r) * stage::xdo(buf, tt) +
                         bonus_u(r) * row_scalar(buf, stage::kKRaw, tt, r) * vdo));
            if (chunk * TC + tt >= 1) pdb_chunk[at - step_k] = scale * q * hist;  // A'_τ at τ − 1
            if (tt == last_tt) {  // dht's term at T − 1: e^{b_{T−1}} rowsum(dht ⊙ U_{T−2})
              const C factor = stage::stepwise(buf, n0) ? C(1)
                                                        : row_scalar(buf, stage::kEB, tt, r) *
                                                              row_scalar(buf, stage::kA, tt, r);
              pdb_chunk[at] = dht ? factor * last[r] : C(0);
            }
            return;
          }
          const C eb = row_scalar(buf, stage::kEB, tt, r), hist = eb * sum;
          dq_chunk[at] = to_storage<Elem>(
              scale * (hist + row_scalar(buf, stage::kKRaw, tt, r) * stage::vdo(buf, tt)));
          pdb_chunk[at] = scale * row_scalar(buf, stage::kQRaw, tt, r) * hist +
                          (tt == last_tt ? eb * last[r] : C(0));
        });
      });  // its barriers also make the workspace writes visible to the stagers

  // ---- reverse walk: dk, and dg as the suffix sum of ∂L/∂b ----
  // Row r's running suffix sum lives in lane r of its group.
  C W[RJ][L], dg_suffix = C(0), du_sum = C(0);  // du_sum: rwkv6, row `lane`'s du
  stage::load_state(dht, W, a, state0, lane, i0);
  C* my_scratch = scratch + group * TC * RJ;
  auto load_reverse = [&](typename stage::prefetch& p, int64_t n) {  // step n: chunk chunks − 1 − n
    stage::load(p, a, where, (chunks - 1 - n) * TC, true);
  };
  auto commit_reverse = [&](const typename stage::prefetch& p, C* buf) {
    stage::template commit<true>(p, buf, scale, where);
  };
  pipelined_chunks<typename stage::prefetch>(
      chunks, buffer, load_reverse, commit_reverse, [&](int64_t n, const C* buf) {
        const int64_t chunk = chunks - 1 - n;
        C part[TC * RJ];  // W_τ · v_τ per token and row (W before token τ's own term)
#pragma unroll
        for (int m = 0; m < TC * RJ; ++m) part[m] = C(0);
        walk_chunk(stage::stepwise(buf, n0), [&](auto step_by_step) {
          reverse_walk<stage, decltype(step_by_step)::value>(buf, lane, n0, W, part);
        });
        // dk, and each (token, row)'s term of ∂L/∂b into the group's scratch.
        const int64_t key = chunk_key(chunk);
        Elem* dk_chunk = static_cast<Elem*>(a.dk) + key;
        const int tokens = tokens_in(chunk), last_tt = last_place(chunk);
        reduce_scatter<NL>(part, lane, [&](int m, C sum) {
          const int tt = m / RJ, r = m % RJ;
          C term = C(0);
          if constexpr (kRwkv6) {
            if (tt < tokens && r < rows_in) {
              const C fut = row_scalar(buf, stage::kEBI, tt, r) * sum;  // fut'_τ
              dk_chunk[tt * step_k + r] = to_storage<Elem>(
                  fut + scale * (row_scalar(buf, stage::kQNext, tt, r) * stage::xdo(buf, tt) +
                                 bonus_u(r) * row_scalar(buf, stage::kQRaw, tt, r) *
                                     stage::vdo(buf, tt)));
              term = row_scalar(buf, stage::kPdb, tt, r) -
                     (tt != last_tt ? row_scalar(buf, stage::kKRaw, tt, r) * fut : C(0));
            }
          } else if (tt < tokens && r < rows_in) {
            const C fut = row_scalar(buf, stage::kEBI, tt, r) * sum;
            dk_chunk[tt * step_k + r] = to_storage<Elem>(
                scale * row_scalar(buf, stage::kQRaw, tt, r) * stage::vdo(buf, tt) + fut);
            term = row_scalar(buf, stage::kPdb, tt, r) -
                   (tt != last_tt ? row_scalar(buf, stage::kKRaw, tt, r) * fut : C(0));
          }
          my_scratch[tt * RJ + r] = term;
        });
        __syncwarp();
        if (lane < rows_in) {
          Elem* dg_chunk = static_cast<Elem*>(a.dg) + key + lane;
#pragma unroll
          for (int tt = TC - 1; tt >= 0; --tt) {
            if (tt >= tokens) continue;
            dg_suffix += my_scratch[tt * RJ + lane];
            dg_chunk[tt * step_k] = to_storage<Elem>(dg_suffix);
            if constexpr (kRwkv6)
              du_sum += scale * row_scalar(buf, stage::kQRaw, tt, lane) *
                        row_scalar(buf, stage::kKRaw, tt, lane) * stage::vdo(buf, tt);
          }
        }
      });
  if constexpr (kRwkv6)
    if (lane < rows_in) du_partials<C>(a)[int64_t(blockIdx.y) * a.K + i0 + lane] = du_sum;
}

}  // namespace glabench::parallel_scan
