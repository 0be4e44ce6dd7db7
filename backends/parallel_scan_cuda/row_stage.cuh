// Staging for the row-layout kernel (backward_dq_dk_dg): a chunk of TC tokens of the
// V-vectors v and do (strip layout), plus the per-row scalars a = exp(g), k and q for
// the block's rows. Same prefetch/commit double-buffering as column_stage.
#pragma once

#include "scan_args.hpp"
#include "scan_tile.cuh"

namespace glabench::parallel_scan {

template <typename Elem, int NL, int L, int RJ, int TC, int THREADS>
struct row_stage {
  using C = compute_t<Elem>;
  using layout = strip_layout<C, NL, L>;
  static constexpr int kGroups = THREADS / NL;
  static constexpr int kRows = kGroups * RJ;  // key rows per block
  static constexpr int kVecElems = 2 * TC * layout::kPadded;
  static constexpr int kRowElems = 3 * TC * kRows;
  static constexpr int kPerThread = (kVecElems + kRowElems + THREADS - 1) / THREADS;
  static constexpr int kBufferValues = 2 * TC * layout::kRow + 3 * TC * kRows;

  struct prefetch {
    Elem raw[kPerThread];
  };

  __device__ static const C* vec(const C* buf, int which, int tt) { return buf + (which * TC + tt) * layout::kRow; }
  __device__ static const C* rows(const C* buf, int which, int tt) {
    return buf + 2 * TC * layout::kRow + (which * TC + tt) * kRows;
  }

  __device__ static void load(prefetch& r, const scan_args& a, int64_t b, int64_t h, int64_t t0, int64_t row0) {
#pragma unroll
    for (int n = 0; n < kPerThread; ++n) {
      const int e = threadIdx.x + n * THREADS;
      Elem value = Elem(0.0f);
      if (e < kVecElems) {
        const int which = e / (TC * layout::kPadded), rem = e % (TC * layout::kPadded);
        const int64_t t = t0 + rem / layout::kPadded, j = rem % layout::kPadded;
        const Elem* src = static_cast<const Elem*>(which == 0 ? a.v : a.d_o);
        if (j < a.V && t < a.T) value = src[token_index(b, t, h, j, a.T, a.H, a.V)];
      } else if (e < kVecElems + kRowElems) {
        const int rem = e - kVecElems;
        const int which = rem / (TC * kRows), r2 = rem % (TC * kRows);
        const int64_t t = t0 + r2 / kRows, i = row0 + r2 % kRows;
        const Elem* src = static_cast<const Elem*>(which == 0 ? a.g : which == 1 ? a.k : a.q);
        if (i < a.K && t < a.T) value = src[token_index(b, t, h, i, a.T, a.H, a.K)];
      }
      r.raw[n] = value;
    }
  }

  __device__ static void commit(const prefetch& r, C* buf, const scan_args& a, int64_t t0, int64_t row0) {
#pragma unroll
    for (int n = 0; n < kPerThread; ++n) {
      const int e = threadIdx.x + n * THREADS;
      if (e < kVecElems) {
        const int which = e / (TC * layout::kPadded), rem = e % (TC * layout::kPadded);
        const int tt = rem / layout::kPadded, j = rem % layout::kPadded;
        buf[(which * TC + tt) * layout::kRow + layout::slot(j)] = to_compute<C>(r.raw[n]);
      } else if (e < kVecElems + kRowElems) {
        const int rem = e - kVecElems;
        const int which = rem / (TC * kRows), r2 = rem % (TC * kRows);
        const int tt = r2 / kRows;
        C value = to_compute<C>(r.raw[n]);
        if (which == 0) value = (row0 + r2 % kRows < a.K && t0 + tt < a.T) ? exp_of(value) : C(0);
        buf[2 * TC * layout::kRow + rem] = value;
      }
    }
  }
};

}  // namespace glabench::parallel_scan
