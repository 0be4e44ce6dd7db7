// Forward (seed 002, column layout): each thread keeps a K-strip of CJ columns of the
// state S (K×V) in registers and walks the tokens:
//   S[i][j] = exp(g_t[i]) S[i][j] + k_t[i] v_t[j],   o_t[j] = scale Σ_i q_t[i] S[i][j]
// in the chunk-rescaled form of chunk_stage.cuh (per token U += k̃ᵀv, o = q̃ U; per chunk
// S = β ⊙ U), or step by step for a strip whose chunk decay is out of the rescaling
// range. The Σ_i is L FMAs in the thread plus a shuffle reduction over its NL lanes,
// done once per chunk for all its tokens.
//
// rwkv6 (OP): o_t reads the state before its token, so each token takes o = q̃ U before
// U += k̃ᵀv (step by step: o = q S, then S = e^{g} S + kᵀv), and its bonus c_t v_t joins
// o after the reduction (chunk_stage::store_chunk).
#pragma once

#include <type_traits>

#include "chunk_stage.cuh"

namespace glabench::parallel_scan {

template <recurrence OP, typename Elem, int NL, int L, int CJ, int TC, int THREADS,
          typename C_ = compute_t<Elem>>
__global__ void __launch_bounds__(THREADS) forward_kernel(scan_args a) {
  using stage = chunk_stage<OP, Elem, NL, L, CJ, TC, THREADS, C_>;
  using C = typename stage::C;
  constexpr int kStride = stage::layout::kStride;
  const double_buffer<C, stage::kBufferValues> buffer;

  const thread_place<NL> at(a);
  const int lane = at.lane, group = at.group;
  const int64_t h = at.h, state0 = at.state0;
  const int64_t col0 = int64_t(blockIdx.x) * stage::kColumns, j0 = col0 + group * CJ;
  const typename stage::source src{static_cast<const Elem*>(a.g), static_cast<const Elem*>(a.k),
                                   static_cast<const Elem*>(a.q), static_cast<const Elem*>(a.v)};
  const C scale = static_cast<C>(a.scale);
  const typename stage::cursor where = stage::make_cursor(a, at.seq, h, col0);
  const int64_t out0 = stage::output_base(a, at.seq, h, j0);

  C S[L][CJ];  // the state; inside a rescaled chunk, U
  stage::load_state(static_cast<const Elem*>(a.h0), S, a, state0, lane, j0);

  const int64_t chunks = (at.seq.T + TC - 1) / TC;
  Elem* out = static_cast<Elem*>(a.o);
  auto load = [&](typename stage::prefetch& p, int64_t chunk) {
    stage::load(p, src, where, chunk * TC);
  };
  auto commit = [&](const typename stage::prefetch& p, C* buf) {
    stage::commit(p, buf, scale, where);
  };
  // The fp64 state's blocks of 256 threads stagger their staging (pipelined_chunks):
  // 1.5% faster at B4 T2048 H16 D128; with 128 threads (one warp a scheduler) 12% slower.
  constexpr bool kStagger = stage::kWiderState && THREADS >= 256;
  using prefetch = typename stage::prefetch;
  pipelined_chunks<prefetch, kStagger>(
      chunks, buffer, load, commit, [&](int64_t chunk, const C* buf) {
        C o_part[TC * CJ];  // per-token partial sums, reduced once per chunk
#pragma unroll
        for (int n = 0; n < TC * CJ; ++n) o_part[n] = C(0);
        // The chunk's tokens, rescaled or (STEP) step by step; one loop each, so the
        // strip's choice is one branch per chunk.
        auto walk = [&](auto step_by_step) {
          constexpr bool STEP = decltype(step_by_step)::value;
#pragma unroll
          for (int tt = 0; tt < TC; ++tt) {
            // Two interleaved sums halve the FMA chain. The fp64 state's 8-long strips keep
            // one: its DFMAs issue at half the rate, and the second chain costs a DADD a
            // column and token (with chunk_stage's pointer-stepping split loads and single
            // selects, the wide forward went 0.735 → 0.719 ms, H200). rwkv6 keeps one too
            // where the state is the storage's own (fp32, or fp64 for fp64): its o does not
            // wait for the token's update, whose independent FMAs hide the chain (bf16 B4
            // T2048 H16 D128, wide width 4, H100: 0.4707 → 0.4654 ms).
            constexpr int kChains = stage::kWiderState        ? (L <= 8 ? 1 : 2)
                                    : OP == recurrence::rwkv6 ? 1
                                                              : 2;
            C ke[L], qe[L], v[CJ], o_odd[CJ];
            load_strip<L>(stage::vec(buf, stage::kK, tt) + lane * kStride, ke);
            load_strip<L>(stage::vec(buf, stage::kQ, tt) + lane * kStride, qe);
#pragma unroll
            for (int c = 0; c < CJ; ++c) {
              v[c] = stage::cols(buf, tt)[group * CJ + c];
              o_odd[c] = C(0);
            }
            auto update = [&] {
              if constexpr (STEP) stage::scale_strip(S, stage::vec(buf, stage::kA, tt), lane);
#pragma unroll
              for (int e = 0; e < L; ++e)
#pragma unroll
                for (int c = 0; c < CJ; ++c) S[e][c] += ke[e] * v[c];
            };
            if constexpr (OP == recurrence::gla) update();
#pragma unroll
            for (int e = 0; e < L; ++e)
#pragma unroll
              for (int c = 0; c < CJ; ++c)
                (kChains == 2 && e % 2 ? o_odd[c] : o_part[tt * CJ + c]) += qe[e] * S[e][c];
            if constexpr (OP == recurrence::rwkv6) update();
            if constexpr (kChains == 2)
#pragma unroll
              for (int c = 0; c < CJ; ++c) o_part[tt * CJ + c] += o_odd[c];
          }
          if constexpr (!STEP) stage::scale_strip(S, stage::beta(buf), lane);  // U → S
        };
        walk_chunk(stage::stepwise(buf, lane), walk);
        stage::store_chunk(out, o_part, a, where, out0, chunk, j0, lane, buf, group);
      });

  stage::store_state(static_cast<Elem*>(a.ht), S, a, state0, lane, j0);
}

}  // namespace glabench::parallel_scan
