// Staging for the row-layout kernel (backward_dq_dk_dg): a chunk of TC tokens of the
// V-vectors v and do (strip layout), and per key row of the block and token the
// scalars its two walks multiply with, in the chunk-rescaled form of chunk_stage.cuh:
//
//   slot   rescaled row            step-by-step row   used for
//   kA     –                       a = e^{g}          the step-by-step decay
//   kKK    k̃ = k e^{−b}            k                  forward walk: U += k̃ v
//   kQQ    q̃ = scale q e^{b}       scale q            reverse walk: W += q̃ do
//   kEB    e^{b}                   a                  hist = e^{b} (U_{τ−1} · do)
//   kEBI   e^{−b}                  1                  fut = e^{−b} (W · v)
//   kKRaw, kQRaw                   k, q               dq, dk, dg
//   kPdb   the hist part of ∂L/∂b (reverse walk only, from the workspace)
//
// plus β = e^{b_last} (1 step by step) and the step flag per row, and v·do per token
// (from the workspace; token_dot_kernel). The RJ rows of a thread decide together.
// Same prefetch/commit double-buffering as chunk_stage; thread n < kRows stages every
// token of row n, so b's running sum stays in its registers.
#pragma once

#include "chunk_stage.cuh"

namespace glabench::parallel_scan {

template <typename Elem, int NL, int L, int RJ, int TC, int THREADS>
struct row_stage {
  using C = compute_t<Elem>;
  using layout = strip_layout<C, NL, L>;
  static constexpr int kGroups = THREADS / NL;
  static constexpr int kRows = kGroups * RJ;  // key rows per block

  enum { kA, kKK, kQQ, kEB, kEBI, kKRaw, kQRaw, kPdb, kScalars };
  static constexpr int kScalarBase = 2 * TC * layout::kRow;
  static constexpr int kBeta = kScalarBase + kScalars * TC * kRows;
  static constexpr int kFlag = kBeta + kRows;
  static constexpr int kVdo = kFlag + kRows;
  static constexpr int kBufferValues = kVdo + TC + (4 - TC % 4) % 4;
  // After the two buffers: each group's per-token dg terms of the chunk, for its suffix sum.
  static constexpr int kScratchValues = kGroups * TC * RJ;

  // V-vectors: each staged row is spread over the threads (kVecRowsPerPass tokens at
  // once when the block is wider than the row); addresses are a row pointer plus a lane
  // offset. Row scalars: thread n < kRows; v·do: threads kRows … kRows + TC − 1.
  static_assert(THREADS % layout::kPadded == 0 || layout::kPadded % THREADS == 0, "powers of two");
  static constexpr int kVecRowsPerPass = THREADS >= layout::kPadded ? THREADS / layout::kPadded : 1;
  static constexpr int kVecSplits = layout::kPadded > THREADS ? layout::kPadded / THREADS : 1;
  static constexpr int kVecPasses = (TC + kVecRowsPerPass - 1) / kVecRowsPerPass;
  static_assert(kRows + TC <= THREADS, "row scalars and v·do: one thread each");
  static_assert(32 % RJ == 0, "a thread's rows are staged in one warp");
  static constexpr int kStagingWarps = (kRows + TC + 31) / 32;

  struct prefetch {
    Elem vec[2][kVecPasses][kVecSplits];
    Elem g[TC], k[TC], q[TC];
    C pdb[TC];
    C vdo;
  };

  __device__ static const C* vec(const C* buf, int which, int tt) {
    return buf + (which * TC + tt) * layout::kRow;
  }
  __device__ static const C* scalars(const C* buf, int which, int tt) {
    return buf + kScalarBase + (which * TC + tt) * kRows;
  }
  __device__ static const C* beta(const C* buf) { return buf + kBeta; }
  __device__ static bool stepwise(const C* buf, int row) { return buf[kFlag + row] != C(0); }
  __device__ static C vdo(const C* buf, int tt) { return buf[kVdo + tt]; }

  __device__ static int vec_row() { return threadIdx.x / layout::kPadded % kVecRowsPerPass; }
  __device__ static int vec_index(int split) {
    return threadIdx.x % layout::kPadded + split * THREADS;
  }

  __device__ static void load(prefetch& r, const scan_args& a, int64_t b, int64_t h, int64_t t0,
                              int64_t row0, bool with_pdb) {
    const int64_t first = (b * a.T + t0) * a.H + h;  // token (b, t0, h)
    const int step_k = int(a.H * a.K), step_v = int(a.H * a.V), V = int(a.V), K = int(a.K);
    const int rows = int(a.T - t0 < TC ? a.T - t0 : TC);
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      const Elem* src = static_cast<const Elem*>(which == 0 ? a.v : a.d_o) + first * a.V;
#pragma unroll
      for (int pass = 0; pass < kVecPasses; ++pass) {
        const int tt = pass * kVecRowsPerPass + vec_row();
#pragma unroll
        for (int split = 0; split < kVecSplits; ++split) {
          const int j = vec_index(split);
          r.vec[which][pass][split] = (tt < rows && j < V) ? src[tt * step_v + j] : Elem(0.0f);
        }
      }
    }
    const int n = threadIdx.x, i = int(row0) + n;
    if (n < kRows) {
      const Elem *g = static_cast<const Elem*>(a.g) + first * a.K,
                 *k = static_cast<const Elem*>(a.k) + first * a.K,
                 *q = static_cast<const Elem*>(a.q) + first * a.K;
      const C* pdb = partial_db<C>(a) + first * a.K;
#pragma unroll
      for (int tt = 0; tt < TC; ++tt) {
        const bool in = tt < rows && i < K;
        r.g[tt] = in ? g[tt * step_k + i] : Elem(0.0f);
        r.k[tt] = in ? k[tt * step_k + i] : Elem(0.0f);
        r.q[tt] = in ? q[tt * step_k + i] : Elem(0.0f);
        r.pdb[tt] = in && with_pdb ? pdb[tt * step_k + i] : C(0);
      }
    } else if (n < kRows + TC) {
      const int tt = n - kRows;
      r.vdo = tt < rows ? token_dots<C>(a)[first + int64_t(tt) * a.H] : C(0);
    }
  }

  // Rows past K and tokens past T were loaded as zeros: a = 1, and nothing is added.
  __device__ static void commit(const prefetch& r, C* buf, C scale) {
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
    const int n = threadIdx.x;
    if (n / 32 >= kStagingWarps) return;  // whole warps: the ballot below needs them
    C bs[TC], b = C(0);
#pragma unroll
    for (int tt = 0; tt < TC; ++tt) bs[tt] = b += to_compute<C>(r.g[tt]);
    const unsigned out_of_range = __ballot_sync(0xffffffffu, n < kRows && !(b >= -kMaxRescale<C>));
    const bool step = (out_of_range >> (n % 32 / RJ * RJ)) & ((1u << RJ) - 1u);
    if (n < kRows) {
      auto put = [&](int which, int tt, C value) {
        buf[kScalarBase + (which * TC + tt) * kRows + n] = value;
      };
#pragma unroll
      for (int tt = 0; tt < TC; ++tt) {
        const C g = to_compute<C>(r.g[tt]), k = to_compute<C>(r.k[tt]), q = to_compute<C>(r.q[tt]);
        const C a = exp_of(g), eb = step ? a : exp_of(bs[tt]), ebi = step ? C(1) : exp_of(-bs[tt]);
        put(kA, tt, a);
        put(kKK, tt, k * ebi);
        put(kQQ, tt, scale * q * (step ? C(1) : eb));
        put(kEB, tt, eb);
        put(kEBI, tt, ebi);
        put(kKRaw, tt, k);
        put(kQRaw, tt, q);
        put(kPdb, tt, r.pdb[tt]);
      }
      buf[kBeta + n] = step ? C(1) : exp_of(b);
      buf[kFlag + n] = step ? C(1) : C(0);
    } else if (n < kRows + TC) {
      buf[kVdo + n - kRows] = r.vdo;
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
};

}  // namespace glabench::parallel_scan
