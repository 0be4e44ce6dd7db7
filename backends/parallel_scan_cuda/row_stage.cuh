// Staging for the row-layout kernel (backward_dq_dk_dg): a chunk of TC tokens of the
// V-vectors v and do (strip layout), plus the per-row scalars a = exp(g), k and q for
// the block's rows. Same prefetch/commit double-buffering as chunk_stage.
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
  static constexpr int kBufferValues = 2 * TC * layout::kRow + 3 * TC * kRows;

  // As in chunk_stage: each staged V-vector row is spread over the threads, and so
  // are the per-row scalars; addresses are a row pointer plus a lane offset.
  static_assert(THREADS % layout::kPadded == 0 || layout::kPadded % THREADS == 0, "powers of two");
  static constexpr int kVecRowsPerPass = THREADS >= layout::kPadded ? THREADS / layout::kPadded : 1;
  static constexpr int kVecSplits = layout::kPadded > THREADS ? layout::kPadded / THREADS : 1;
  static constexpr int kVecPasses = (TC + kVecRowsPerPass - 1) / kVecRowsPerPass;
  static_assert(THREADS % kRows == 0, "row scalars: whole rows per pass");
  static constexpr int kScalarRowsPerPass = THREADS / kRows;
  static constexpr int kScalarPasses = (TC + kScalarRowsPerPass - 1) / kScalarRowsPerPass;

  struct prefetch {
    Elem vec[2][kVecPasses][kVecSplits];
    Elem scalar[3][kScalarPasses];
  };

  __device__ static const C* vec(const C* buf, int which, int tt) {
    return buf + (which * TC + tt) * layout::kRow;
  }
  __device__ static const C* rows(const C* buf, int which, int tt) {
    return buf + 2 * TC * layout::kRow + (which * TC + tt) * kRows;
  }

  __device__ static int vec_row() { return threadIdx.x / layout::kPadded % kVecRowsPerPass; }
  __device__ static int vec_index(int split) {
    return threadIdx.x % layout::kPadded + split * THREADS;
  }
  __device__ static int scalar_row() { return threadIdx.x / kRows; }
  __device__ static int scalar_index() { return threadIdx.x % kRows; }

  __device__ static void load(prefetch& r, const scan_args& a, int64_t b, int64_t h, int64_t t0,
                              int64_t row0) {
    const int64_t bh_k = (b * a.T * a.H + h) * a.K, bh_v = (b * a.T * a.H + h) * a.V;
    const int64_t step_k = a.H * a.K, step_v = a.H * a.V;
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      const Elem* src = static_cast<const Elem*>(which == 0 ? a.v : a.d_o);
#pragma unroll
      for (int pass = 0; pass < kVecPasses; ++pass) {
        const int64_t t = t0 + pass * kVecRowsPerPass + vec_row();
        const Elem* row = src + bh_v + t * step_v;
#pragma unroll
        for (int split = 0; split < kVecSplits; ++split) {
          const int j = vec_index(split);
          r.vec[which][pass][split] = (j < a.V && t < a.T) ? row[j] : Elem(0.0f);
        }
      }
    }
#pragma unroll
    for (int which = 0; which < 3; ++which) {
      const Elem* src = static_cast<const Elem*>(which == 0 ? a.g : which == 1 ? a.k : a.q);
#pragma unroll
      for (int pass = 0; pass < kScalarPasses; ++pass) {
        const int64_t t = t0 + pass * kScalarRowsPerPass + scalar_row(), i = row0 + scalar_index();
        r.scalar[which][pass] = (i < a.K && t < a.T) ? src[bh_k + t * step_k + i] : Elem(0.0f);
      }
    }
  }

  // A thread's RJ rows × V-strip of a [B,H,K,V] state (h0, dht): zero where the
  // tensor is absent or the element is masked.
  __device__ static void load_state(const Elem* src, C (&x)[RJ][L], const scan_args& a,
                                    int64_t state0, int lane, int64_t i0) {
#pragma unroll
    for (int r = 0; r < RJ; ++r)
#pragma unroll
      for (int e = 0; e < L; ++e) {
        const int64_t i = i0 + r, j = lane * L + e;
        x[r][e] = (src && i < a.K && j < a.V) ? to_compute<C>(src[state0 + i * a.V + j]) : C(0);
      }
  }

  __device__ static void commit(const prefetch& r, C* buf, const scan_args& a, int64_t t0,
                                int64_t row0) {
#pragma unroll
    for (int which = 0; which < 2; ++which)
#pragma unroll
      for (int pass = 0; pass < kVecPasses; ++pass) {
        const int tt = pass * kVecRowsPerPass + vec_row();
        if (tt >= TC) continue;
#pragma unroll
        for (int split = 0; split < kVecSplits; ++split)
          buf[(which * TC + tt) * layout::kRow + layout::slot(vec_index(split))] =
              to_compute<C>(r.vec[which][pass][split]);
      }
#pragma unroll
    for (int which = 0; which < 3; ++which)
#pragma unroll
      for (int pass = 0; pass < kScalarPasses; ++pass) {
        const int tt = pass * kScalarRowsPerPass + scalar_row();
        if (tt >= TC) continue;
        C value = to_compute<C>(r.scalar[which][pass]);
        if (which == 0)
          value = (row0 + scalar_index() < a.K && t0 + tt < a.T) ? exp_of(value) : C(0);
        buf[2 * TC * layout::kRow + (which * TC + tt) * kRows + scalar_index()] = value;
      }
  }
};

}  // namespace glabench::parallel_scan
