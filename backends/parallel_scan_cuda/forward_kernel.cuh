// Forward (seed 002, column layout): each thread keeps a K-strip of CJ columns of the
// state S (K×V) in registers and walks the tokens:
//   S[i][j] = exp(g_t[i]) S[i][j] + k_t[i] v_t[j],   o_t[j] = scale Σ_i q_t[i] S[i][j]
// The Σ_i is L FMAs in the thread plus a shuffle reduction over its NL lanes.
#pragma once

#include "column_stage.cuh"

namespace glabench::parallel_scan {

template <typename Elem, int NL, int L, int CJ, int TC, int THREADS>
__global__ void __launch_bounds__(THREADS) forward_kernel(scan_args a) {
  using stage = column_stage<Elem, NL, L, CJ, TC, THREADS>;
  using C = typename stage::C;
  const double_buffer<C, stage::kBufferValues> buffer;

  const thread_place<NL> at(a);
  const int lane = at.lane, group = at.group;
  const int64_t b = at.b, h = at.h, state0 = at.state0;
  const int64_t col0 = int64_t(blockIdx.x) * stage::kColumns, j0 = col0 + group * CJ;
  const typename stage::source src{static_cast<const Elem*>(a.g), static_cast<const Elem*>(a.k),
                                   static_cast<const Elem*>(a.q), static_cast<const Elem*>(a.v)};

  C S[L][CJ];
  stage::load_state(static_cast<const Elem*>(a.h0), S, a, state0, lane, j0);

  const int64_t chunks = (a.T + TC - 1) / TC;
  typename stage::prefetch next;
  stage::load(next, src, a, b, h, 0, col0);
  stage::commit(next, buffer(0), C(1), a, 0);
  __syncthreads();
  Elem* out = static_cast<Elem*>(a.o);
  const C scale = static_cast<C>(a.scale);
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    if (chunk + 1 < chunks) stage::load(next, src, a, b, h, (chunk + 1) * TC, col0);
    const C* buf = buffer(chunk);
    C o_part[TC][CJ];  // per-token partial sums, reduced once per chunk
#pragma unroll
    for (int tt = 0; tt < TC; ++tt) {
      const int64_t t = chunk * TC + tt;
#pragma unroll
      for (int c = 0; c < CJ; ++c) o_part[tt][c] = C(0);
      if (t >= a.T) continue;  // staged zeros past T would reset the state
      C ae[L], ke[L], qe[L];
      load_strip<L>(stage::vec(buf, 0, tt) + lane * stage::layout::kStride, ae);
      load_strip<L>(stage::vec(buf, 1, tt) + lane * stage::layout::kStride, ke);
      load_strip<L>(stage::vec(buf, 2, tt) + lane * stage::layout::kStride, qe);
      const C* value = stage::cols(buf, tt) + group * CJ;
      // Two interleaved partial sums per column halve the dependent-FMA chain.
      C v[CJ], o_odd[CJ];
#pragma unroll
      for (int c = 0; c < CJ; ++c) {
        v[c] = value[c];
        o_odd[c] = C(0);
      }
#pragma unroll
      for (int e = 0; e < L; ++e)
#pragma unroll
        for (int c = 0; c < CJ; ++c) {
          S[e][c] = ae[e] * S[e][c] + ke[e] * v[c];
          (e % 2 ? o_odd[c] : o_part[tt][c]) += qe[e] * S[e][c];
        }
#pragma unroll
      for (int c = 0; c < CJ; ++c) o_part[tt][c] += o_odd[c];
    }
    reduce_and_write<NL>(o_part, lane, [&](int tt, int c, C sum) {
      const int64_t t = chunk * TC + tt;
      if (t < a.T && j0 + c < a.V)
        out[token_index(b, t, h, j0 + c, a.T, a.H, a.V)] = to_storage<Elem>(scale * sum);
    });
    if (chunk + 1 < chunks) stage::commit(next, buffer(chunk + 1), C(1), a, (chunk + 1) * TC);
    __syncthreads();
  }

  stage::store_state(static_cast<Elem*>(a.ht), S, a, state0, lane, j0);
}

}  // namespace glabench::parallel_scan
