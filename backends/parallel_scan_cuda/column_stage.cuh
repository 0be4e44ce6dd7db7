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
  static constexpr int kGroups = THREADS / NL;   // column groups per block
  static constexpr int kColumns = kGroups * CJ;  // value columns per block
  static constexpr int kBufferValues = 3 * TC * layout::kRow + TC * kColumns;

  // Which staged element a thread handles: a K-vector row of one token is spread over
  // the threads (kVecRowsPerPass rows at once when the block is wider than the row),
  // likewise the column values. Addresses are then a row pointer plus a lane offset.
  static_assert(THREADS % layout::kPadded == 0 || layout::kPadded % THREADS == 0, "powers of two");
  static constexpr int kVecRowsPerPass = THREADS >= layout::kPadded ? THREADS / layout::kPadded : 1;
  static constexpr int kVecSplits = layout::kPadded > THREADS ? layout::kPadded / THREADS : 1;
  static constexpr int kVecPasses = (TC + kVecRowsPerPass - 1) / kVecRowsPerPass;
  static_assert(THREADS % kColumns == 0, "column values: whole rows per pass");
  static constexpr int kColRowsPerPass = THREADS / kColumns;
  static constexpr int kColPasses = (TC + kColRowsPerPass - 1) / kColRowsPerPass;

  struct prefetch {
    Elem vec[3][kVecPasses][kVecSplits];
    Elem col[kColPasses];
  };

  // The compute-type views of one buffer.
  __device__ static const C* vec(const C* buf, int which, int tt) {
    return buf + (which * TC + tt) * layout::kRow;
  }
  __device__ static const C* cols(const C* buf, int tt) {
    return buf + 3 * TC * layout::kRow + tt * kColumns;
  }

  struct source {
    const Elem* g;
    const Elem* k;
    const Elem* q;
    const Elem* x;  // per-column input, [B,T,H,V]
  };

  __device__ static int vec_row() { return threadIdx.x / layout::kPadded % kVecRowsPerPass; }
  __device__ static int vec_index(int split) {
    return threadIdx.x % layout::kPadded + split * THREADS;
  }
  __device__ static int col_row() { return threadIdx.x / kColumns; }
  __device__ static int col_index() { return threadIdx.x % kColumns; }

  __device__ static void load(prefetch& r, const source& s, const scan_args& a, int64_t b,
                              int64_t h, int64_t t0, int64_t col0) {
    const int64_t bh_k = (b * a.T * a.H + h) * a.K, bh_v = (b * a.T * a.H + h) * a.V;
    const int64_t step_k = a.H * a.K, step_v = a.H * a.V;
#pragma unroll
    for (int which = 0; which < 3; ++which) {
      const Elem* src = which == 0 ? s.g : which == 1 ? s.k : s.q;
#pragma unroll
      for (int pass = 0; pass < kVecPasses; ++pass) {
        const int64_t t = t0 + pass * kVecRowsPerPass + vec_row();
        const Elem* row = src + bh_k + t * step_k;
#pragma unroll
        for (int split = 0; split < kVecSplits; ++split) {
          const int i = vec_index(split);
          r.vec[which][pass][split] = (i < a.K && t < a.T) ? row[i] : Elem(0.0f);
        }
      }
    }
#pragma unroll
    for (int pass = 0; pass < kColPasses; ++pass) {
      const int64_t t = t0 + pass * kColRowsPerPass + col_row(), j = col0 + col_index();
      r.col[pass] = (j < a.V && t < a.T) ? s.x[bh_v + t * step_v + j] : Elem(0.0f);
    }
  }

  // A thread's K-strip × CJ columns of a [B,H,K,V] state (h0, dht): zero where the
  // tensor is absent or the element is masked.
  __device__ static void load_state(const Elem* src, C (&x)[L][CJ], const scan_args& a,
                                    int64_t state0, int lane, int64_t j0) {
#pragma unroll
    for (int e = 0; e < L; ++e)
#pragma unroll
      for (int c = 0; c < CJ; ++c) {
        const int64_t i = lane * L + e, j = j0 + c;
        x[e][c] = (src && i < a.K && j < a.V) ? to_compute<C>(src[state0 + i * a.V + j]) : C(0);
      }
  }
  __device__ static void store_state(Elem* dst, const C (&x)[L][CJ], const scan_args& a,
                                     int64_t state0, int lane, int64_t j0) {
#pragma unroll
    for (int e = 0; e < L; ++e)
#pragma unroll
      for (int c = 0; c < CJ; ++c) {
        const int64_t i = lane * L + e, j = j0 + c;
        if (i < a.K && j < a.V) dst[state0 + i * a.V + j] = to_storage<Elem>(x[e][c]);
      }
  }

  __device__ static void commit(const prefetch& r, C* buf, C q_scale, const scan_args& a,
                                int64_t t0) {
#pragma unroll
    for (int which = 0; which < 3; ++which)
#pragma unroll
      for (int pass = 0; pass < kVecPasses; ++pass) {
        const int tt = pass * kVecRowsPerPass + vec_row();
        if (tt >= TC) continue;
#pragma unroll
        for (int split = 0; split < kVecSplits; ++split) {
          const int i = vec_index(split);
          C value = to_compute<C>(r.vec[which][pass][split]);
          // Padded rows get a = 0 so their state stays 0; the log-space gate becomes a
          // decay factor once, here, not in every thread that reads it.
          if (which == 0) value = (i < a.K && t0 + tt < a.T) ? exp_of(value) : C(0);
          if (which == 2) value *= q_scale;
          buf[(which * TC + tt) * layout::kRow + layout::slot(i)] = value;
        }
      }
#pragma unroll
    for (int pass = 0; pass < kColPasses; ++pass) {
      const int tt = pass * kColRowsPerPass + col_row();
      if (tt < TC)
        buf[3 * TC * layout::kRow + tt * kColumns + col_index()] = to_compute<C>(r.col[pass]);
    }
  }
};

}  // namespace glabench::parallel_scan
