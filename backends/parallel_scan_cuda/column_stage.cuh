// Staging for the two column-layout kernels (forward, backward_dv): a chunk of TC
// tokens of the K-vectors a = exp(g), k and qscale·q (strip layout), plus one
// per-column value x (v for the forward, do for dv) for the block's columns.
//
// Latency hiding: load() issues the global loads of the next chunk into registers
// before the current chunk is computed; commit() converts them (exp of the gate,
// the q scale, the mask) and writes them to the other shared-memory buffer.
#pragma once

#include "scan_args.hpp"
#include "scan_tile.cuh"

namespace glabench::parallel_scan {

template <typename Elem, int NL, int L, int CJ, int TC, int THREADS>
struct column_stage {
  using C = compute_t<Elem>;
  using layout = strip_layout<C, NL, L>;
  static constexpr int kGroups = THREADS / NL;       // column groups per block
  static constexpr int kColumns = kGroups * CJ;      // value columns per block
  static constexpr int kVecElems = 3 * TC * layout::kPadded;
  static constexpr int kColElems = TC * kColumns;
  static constexpr int kPerThread = (kVecElems + kColElems + THREADS - 1) / THREADS;
  static constexpr int kBufferValues = 3 * TC * layout::kRow + TC * kColumns;

  struct prefetch {
    Elem raw[kPerThread];
  };

  // The compute-type views of one buffer.
  __device__ static const C* vec(const C* buf, int which, int tt) { return buf + (which * TC + tt) * layout::kRow; }
  __device__ static const C* cols(const C* buf, int tt) { return buf + 3 * TC * layout::kRow + tt * kColumns; }

  struct source {
    const Elem* g;
    const Elem* k;
    const Elem* q;
    const Elem* x;  // per-column input, [B,T,H,V]
  };

  __device__ static void load(prefetch& r, const source& s, const scan_args& a, int64_t b, int64_t h, int64_t t0,
                              int64_t col0) {
#pragma unroll
    for (int n = 0; n < kPerThread; ++n) {
      const int e = threadIdx.x + n * THREADS;
      Elem value = Elem(0.0f);
      if (e < kVecElems) {
        const int which = e / (TC * layout::kPadded), rem = e % (TC * layout::kPadded);
        const int64_t t = t0 + rem / layout::kPadded, i = rem % layout::kPadded;
        const Elem* src = which == 0 ? s.g : which == 1 ? s.k : s.q;
        if (i < a.K && t < a.T) value = src[token_index(b, t, h, i, a.T, a.H, a.K)];
      } else if (e < kVecElems + kColElems) {
        const int rem = e - kVecElems;
        const int64_t t = t0 + rem / kColumns, j = col0 + rem % kColumns;
        if (j < a.V && t < a.T) value = s.x[token_index(b, t, h, j, a.T, a.H, a.V)];
      }
      r.raw[n] = value;
    }
  }

  __device__ static void commit(const prefetch& r, C* buf, C q_scale, const scan_args& a, int64_t t0) {
#pragma unroll
    for (int n = 0; n < kPerThread; ++n) {
      const int e = threadIdx.x + n * THREADS;
      if (e < kVecElems) {
        const int which = e / (TC * layout::kPadded), rem = e % (TC * layout::kPadded);
        const int tt = rem / layout::kPadded, i = rem % layout::kPadded;
        C value = to_compute<C>(r.raw[n]);
        // Padded rows get a = 0 so their state stays 0; the log-space gate becomes a
        // decay factor once, here, not in every thread that reads it.
        if (which == 0) value = (i < a.K && t0 + tt < a.T) ? exp_of(value) : C(0);
        if (which == 2) value *= q_scale;
        buf[(which * TC + tt) * layout::kRow + layout::slot(i)] = value;
      } else if (e < kVecElems + kColElems) {
        buf[3 * TC * layout::kRow + (e - kVecElems)] = to_compute<C>(r.raw[n]);
      }
    }
  }
};

}  // namespace glabench::parallel_scan
