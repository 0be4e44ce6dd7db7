// Backward, column layout, tokens in reverse: each thread keeps a K-strip of CJ
// columns of G, the adjoint of the state, in registers:
//   G += scale q_tᵀ do_t;   dv_t[j] = Σ_i k_t[i] G[i][j];   G *= exp(g_t)  (→ adjoint of S_{t-1})
// starting from G = dht; dh0 is the final G.
#pragma once

#include "column_stage.cuh"

namespace glabench::parallel_scan {

template <typename Elem, int NL, int L, int CJ, int TC, int THREADS>
__global__ void __launch_bounds__(THREADS) backward_dv_kernel(scan_args a) {
  using stage = column_stage<Elem, NL, L, CJ, TC, THREADS>;
  using C = typename stage::C;
  const double_buffer<C, stage::kBufferValues> buffer;

  const thread_place<NL> at(a);
  const int lane = at.lane, group = at.group;
  const int64_t b = at.b, h = at.h, state0 = at.state0;
  const int64_t col0 = int64_t(blockIdx.x) * stage::kColumns, j0 = col0 + group * CJ;
  const typename stage::source src{static_cast<const Elem*>(a.g), static_cast<const Elem*>(a.k),
                                   static_cast<const Elem*>(a.q), static_cast<const Elem*>(a.d_o)};
  const C scale = static_cast<C>(a.scale);

  C G[L][CJ];
  stage::load_state(static_cast<const Elem*>(a.dht), G, a, state0, lane, j0);

  const int64_t chunks = (a.T + TC - 1) / TC;
  typename stage::prefetch next;
  stage::load(next, src, a, b, h, (chunks - 1) * TC, col0);
  stage::commit(next, buffer(0), scale, a, (chunks - 1) * TC);
  __syncthreads();
  Elem* dv_out = static_cast<Elem*>(a.dv);
  for (int64_t n = 0; n < chunks; ++n) {
    const int64_t chunk = chunks - 1 - n;
    if (chunk > 0) stage::load(next, src, a, b, h, (chunk - 1) * TC, col0);
    const C* buf = buffer(n);
    C dv_part[TC][CJ];  // per-token partial sums, reduced once per chunk
#pragma unroll
    for (int tt = TC - 1; tt >= 0; --tt) {
      const int64_t t = chunk * TC + tt;
#pragma unroll
      for (int c = 0; c < CJ; ++c) dv_part[tt][c] = C(0);
      if (t >= a.T) continue;
      C ae[L], ke[L], qe[L];  // qe already × scale
      load_strip<L>(stage::vec(buf, 0, tt) + lane * stage::layout::kStride, ae);
      load_strip<L>(stage::vec(buf, 1, tt) + lane * stage::layout::kStride, ke);
      load_strip<L>(stage::vec(buf, 2, tt) + lane * stage::layout::kStride, qe);
      const C* grad_out = stage::cols(buf, tt) + group * CJ;
      C d_o[CJ], dv_odd[CJ];
#pragma unroll
      for (int c = 0; c < CJ; ++c) {
        d_o[c] = grad_out[c];
        dv_odd[c] = C(0);
      }
#pragma unroll
      for (int e = 0; e < L; ++e)
#pragma unroll
        for (int c = 0; c < CJ; ++c) {
          G[e][c] += qe[e] * d_o[c];
          (e % 2 ? dv_odd[c] : dv_part[tt][c]) += ke[e] * G[e][c];
          G[e][c] *= ae[e];
        }
#pragma unroll
      for (int c = 0; c < CJ; ++c) dv_part[tt][c] += dv_odd[c];
    }
    reduce_and_write<NL>(dv_part, lane, [&](int tt, int c, C sum) {
      const int64_t t = chunk * TC + tt;
      if (t < a.T && j0 + c < a.V)
        dv_out[token_index(b, t, h, j0 + c, a.T, a.H, a.V)] = to_storage<Elem>(sum);
    });
    if (chunk > 0) stage::commit(next, buffer(n + 1), scale, a, (chunk - 1) * TC);
    __syncthreads();
  }

  if (a.dh0) stage::store_state(static_cast<Elem*>(a.dh0), G, a, state0, lane, j0);
}

}  // namespace glabench::parallel_scan
