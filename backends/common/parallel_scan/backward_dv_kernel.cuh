// Backward, column layout, tokens in reverse: each thread keeps a K-strip of CJ
// columns of G, the adjoint of the state, in registers:
//   G += scale q_tᵀ do_t;   dv_t[j] = Σ_i k_t[i] G[i][j];   G *= exp(g_t)  (→ adjoint of S_{t-1})
// starting from G = dht; dh0 is the final G.
//
// Chunk-rescaled (chunk_stage.cuh): with b_τ the chunk-local cumulative gate, the
// adjoint of S_τ is e^{−b_τ} ⊙ W_τ, where W starts at β ⊙ G (G entering the chunk from
// later tokens) and gathers W += q̃_τᵀ do_τ walking back, so dv_τ = k̃_τ W_τ. Leaving the
// chunk, G = e^{g_{t0}} e^{−b_{t0}} W = W. Two FMAs per state element and token, as in
// the forward; strips out of the rescaling range go step by step.
//
// rwkv6 (OP): o_t reads S_{t−1}, so the adjoint reaching S_t holds only later tokens'
// terms: dv_t = k_t G before G gathers token t's own, then G = e^{g_t} G + scale q_tᵀ do_t
// (rescaled: dv = k̃ W, then W += q̃ᵀdo, with chunk_stage's q̃ = scale q e^{b_{t−1}}), and
// dv_t gets the bonus c_t do_t after the reduction. Its sum for dv is one FMA chain, as
// in the rwkv6 forward: G's update does not wait for it (wide width 4, 16-token chunks,
// bf16 B4 T2048 H16 D128, H100: 0.507 → 0.460 ms, and ptxas's spills 48 → 8 bytes).
#pragma once

#include <type_traits>

#include "chunk_stage.cuh"

namespace glabench::parallel_scan {

template <recurrence OP, typename Elem, int NL, int L, int CJ, int TC, int THREADS>
__global__ void __launch_bounds__(THREADS) backward_dv_kernel(scan_args a) {
  using stage = chunk_stage<OP, Elem, NL, L, CJ, TC, THREADS>;
  using C = typename stage::C;
  constexpr int kStride = stage::layout::kStride;
  const double_buffer<C, stage::kBufferValues> buffer;

  const thread_place<NL> at(a);
  const int lane = at.lane, group = at.group;
  const int64_t h = at.h, state0 = at.state0;
  const int64_t col0 = int64_t(blockIdx.x) * stage::kColumns, j0 = col0 + group * CJ;
  const typename stage::source src{static_cast<const Elem*>(a.g), static_cast<const Elem*>(a.k),
                                   static_cast<const Elem*>(a.q), static_cast<const Elem*>(a.d_o)};
  const C scale = static_cast<C>(a.scale);
  const typename stage::cursor where = stage::make_cursor(a, at.seq, h, col0);
  const int64_t out0 = stage::output_base(a, at.seq, h, j0);

  C G[L][CJ];  // the adjoint; inside a rescaled chunk, W
  stage::load_state(static_cast<const Elem*>(a.dht), G, a, state0, lane, j0);

  const int64_t chunks = (at.seq.T + TC - 1) / TC;
  Elem* dv_out = static_cast<Elem*>(a.dv);
  auto load = [&](typename stage::prefetch& p, int64_t n) {  // step n: chunk chunks − 1 − n
    stage::load(p, src, where, (chunks - 1 - n) * TC);
  };
  auto commit = [&](const typename stage::prefetch& p, C* buf) {
    stage::commit(p, buf, scale, where);
  };
  pipelined_chunks<typename stage::prefetch>(
      chunks, buffer, load, commit, [&](int64_t n, const C* buf) {
        const int64_t chunk = chunks - 1 - n;
        C dv_part[TC * CJ];  // per-token partial sums, reduced once per chunk
#pragma unroll
        for (int m = 0; m < TC * CJ; ++m) dv_part[m] = C(0);
        auto walk = [&](auto step_by_step) {
          constexpr bool STEP = decltype(step_by_step)::value;
          if constexpr (!STEP) stage::scale_strip(G, stage::beta(buf), lane);  // G → W
#pragma unroll
          for (int tt = TC - 1; tt >= 0; --tt) {
            C ke[L], qe[L], d_o[CJ], dv_odd[CJ];  // qe already × scale
            load_strip<L>(stage::vec(buf, stage::kK, tt) + lane * kStride, ke);
            load_strip<L>(stage::vec(buf, stage::kQ, tt) + lane * kStride, qe);
#pragma unroll
            for (int c = 0; c < CJ; ++c) {
              d_o[c] = stage::cols(buf, tt)[group * CJ + c];
              dv_odd[c] = C(0);
            }
            if constexpr (OP == recurrence::gla) {
#pragma unroll
              for (int e = 0; e < L; ++e)
#pragma unroll
                for (int c = 0; c < CJ; ++c) {
                  G[e][c] += qe[e] * d_o[c];
                  (e % 2 ? dv_odd[c] : dv_part[tt * CJ + c]) += ke[e] * G[e][c];
                }
#pragma unroll
              for (int c = 0; c < CJ; ++c) dv_part[tt * CJ + c] += dv_odd[c];
              if constexpr (STEP) stage::scale_strip(G, stage::vec(buf, stage::kA, tt), lane);
            } else {
#pragma unroll
              for (int e = 0; e < L; ++e)
#pragma unroll
                for (int c = 0; c < CJ; ++c) dv_part[tt * CJ + c] += ke[e] * G[e][c];  // one chain
              if constexpr (STEP) stage::scale_strip(G, stage::vec(buf, stage::kA, tt), lane);
#pragma unroll
              for (int e = 0; e < L; ++e)
#pragma unroll
                for (int c = 0; c < CJ; ++c) G[e][c] += qe[e] * d_o[c];
            }
          }
        };
        walk_chunk(stage::stepwise(buf, lane), walk);
        stage::store_chunk(dv_out, dv_part, a, where, out0, chunk, j0, lane, buf, group);
      });

  if (a.dh0) stage::store_state(static_cast<Elem*>(a.dh0), G, a, state0, lane, j0);
}

}  // namespace glabench::parallel_scan
