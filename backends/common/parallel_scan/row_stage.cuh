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
//
// rwkv6 stages each walk's state update one token late (backward_dq_dk_dg_kernel.cuh):
// the forward walk's token τ adds token τ−1's k v, the reverse walk's token τ adds token
// τ+1's q do. So the staged V-vector is v_{τ−1} (forward) or do_{τ+1} (reverse), and
//
//   slot   rescaled row                 step-by-step row
//   kKK    k_{τ−1} e^{−b_{τ−1}}          a_τ k_{τ−1}     (b_{t0−1} = 0)
//   kQQ    scale q_{τ+1} e^{b_τ}         scale q_{τ+1}
//   kEB    e^{b_{τ−1}}                   1               hist' = e^{b_{τ−1}} (U · do)
//   kKPrev, kQNext                k_{τ−1}, q_{τ+1}     dq, dk
//
// and per token v_{τ−1}·do_τ (forward) or v_τ·do_{τ+1} (reverse) beside v·do.
// Same prefetch/commit double-buffering as chunk_stage. The row scalars are the bulk
// of the staging work, so every thread takes a share: kParts consecutive lanes stage
// one row, kPartTokens tokens each, and b's running sum is a shuffle scan over them.
#pragma once

#include "chunk_stage.cuh"

namespace glabench::parallel_scan {

// The stride between the row scalars of consecutive tokens (row_stage): kRows plus the
// pad that spreads two warp-wide accesses over the most banks — commit's stores (lane
// n: row n / parts, token (n % parts)·part_tokens) and the writers' loads after the
// reduce-scatter (lane n: token m / rj, row (n / nl)·rj + m % rj, m its first value).
// Without the pad both are 4- to 8-way bank conflicts. `words`: 4-byte words a value.
constexpr int scalar_bank_conflicts(int stride, int tc, int rj, int nl, int parts, int part_tokens,
                                    int words) {
  const int values = tc * rj;
  int worst = 0;
  for (int pattern = 0; pattern < 2; ++pattern) {
    int at[32] = {};
    for (int n = 0; n < 32; ++n) {
      const int m = values >= nl ? n % nl * (values / nl) : n % nl / (nl / values);
      const int row = pattern == 0 ? n / parts : n / nl * rj + m % rj;
      const int tt = pattern == 0 ? n % parts * part_tokens : m / rj;
      at[n] = (tt * stride + row) * words;
    }
    int distinct[32] = {};  // addresses per bank
    for (int n = 0; n < 32; ++n) {
      bool seen = false;
      for (int k = 0; k < n; ++k) seen = seen || at[k] == at[n];
      if (!seen) ++distinct[at[n] % 32];
    }
    for (int bank = 0; bank < 32; ++bank) worst = distinct[bank] > worst ? distinct[bank] : worst;
  }
  return worst;
}
constexpr int scalar_stride(int rows, int tc, int rj, int nl, int parts, int part_tokens,
                            int words) {
  int best = rows;
  for (int pad = 1; pad < 32; ++pad)
    if (scalar_bank_conflicts(rows + pad, tc, rj, nl, parts, part_tokens, words) <
        scalar_bank_conflicts(best, tc, rj, nl, parts, part_tokens, words))
      best = rows + pad;
  return best;
}

template <recurrence OP, typename Elem, int NL, int L, int RJ, int TC, int THREADS>
struct row_stage {
  using C = compute_t<Elem>;
  static constexpr bool kRwkv6 = OP == recurrence::rwkv6;
  using layout = strip_layout<C, NL, L>;
  static constexpr int kGroups = THREADS / NL;
  static constexpr int kRows = kGroups * RJ;  // key rows per block

  enum { kA, kKK, kQQ, kEB, kEBI, kKRaw, kQRaw, kPdb, kKPrev, kQNext };
  static constexpr int kScalars = kRwkv6 ? kQNext + 1 : kKPrev;

  // V-vectors: each staged row is spread over the threads (kVecRowsPerPass tokens at
  // once when the block is wider than the row); addresses are a row pointer plus a lane
  // offset. Row scalars: thread n stages part n % kParts of row n / kParts; v·do of
  // token n: thread n < TC.
  static_assert(THREADS % layout::kPadded == 0 || layout::kPadded % THREADS == 0, "powers of two");
  static constexpr int kVecRowsPerPass = THREADS >= layout::kPadded ? THREADS / layout::kPadded : 1;
  static constexpr int kVecSplits = layout::kPadded > THREADS ? layout::kPadded / THREADS : 1;
  static constexpr int kVecPasses = (TC + kVecRowsPerPass - 1) / kVecRowsPerPass;
  static_assert(kRows <= THREADS && TC <= THREADS, "row scalars and v·do: a thread each");
  static constexpr int kParts = THREADS / kRows < TC ? THREADS / kRows : TC;
  static constexpr int kPartTokens = TC / kParts;
  static constexpr int kDecide = RJ * kParts;  // lanes that stage one thread's rows
  static_assert(TC % kParts == 0 && 32 % kDecide == 0, "powers of two");
  static constexpr int kStagingWarps = (kRows * kParts + 31) / 32;

  // The row scalars of one token sit kScalarStride values apart (scalar_stride).
  static constexpr int kScalarStride =
      scalar_stride(kRows, TC, RJ, NL, kParts, kPartTokens, int(sizeof(C)) / 4);
  static constexpr int kScalarBase = 2 * TC * layout::kRow;
  static constexpr int kBeta = kScalarBase + (kScalars * TC * kScalarStride + 3) / 4 * 4;
  static constexpr int kFlag = kBeta + kRows;
  static constexpr int kVdo = kFlag + kRows;
  static constexpr int kXdo = kVdo + TC;  // rwkv6: the neighbouring tokens' v·do
  static constexpr int kBufferValues = kVdo + (kRwkv6 ? 2 : 1) * TC + (4 - TC % 4) % 4;
  // After the two buffers: each group's per-token dg terms of the chunk (reverse walk),
  // or each thread's rows of U before the last token (forward walk).
  static constexpr int kScratchValues =
      kGroups * TC * RJ > THREADS* RJ* L ? kGroups* TC* RJ : THREADS* RJ* L;

  struct prefetch {
    Elem vec[2][kVecPasses][kVecSplits];
    Elem g[kPartTokens], k[kPartTokens], q[kPartTokens];
    Elem next[kPartTokens];  // rwkv6: k_{τ−1} (forward) or q_{τ+1} (reverse)
    C pdb[kPartTokens];
    C vdo, xdo;
    int rows;          // tokens of the chunk before T
    int64_t t0, left;  // the chunk's first token; T − t0
  };

  __device__ static const C* vec(const C* buf, int which, int tt) {
    return buf + (which * TC + tt) * layout::kRow;
  }
  __device__ static const C* scalars(const C* buf, int which, int tt) {
    return buf + kScalarBase + (which * TC + tt) * kScalarStride;
  }
  __device__ static bool stepwise(const C* buf, int row) { return buf[kFlag + row] != C(0); }
  __device__ static C vdo(const C* buf, int tt) { return buf[kVdo + tt]; }
  __device__ static C xdo(const C* buf, int tt) { return buf[kXdo + tt]; }
  // rwkv6: the token each walk's staged neighbour comes from, relative to τ.
  template <bool REVERSE>
  static constexpr int kShift = REVERSE ? 1 : -1;
  // Whether token τ = t0 + tt lies before T and has that neighbour.
  template <bool REVERSE>
  __device__ static bool has_neighbour(const prefetch& r, int tt) {
    return REVERSE ? tt + 1 < r.left : tt < r.rows && r.t0 + tt >= 1;
  }

  __device__ static int vec_row() { return threadIdx.x / layout::kPadded % kVecRowsPerPass; }
  __device__ static int key_row() { return threadIdx.x / kParts; }  // in the block
  __device__ static int first_token() { return threadIdx.x % kParts * kPartTokens; }
  __device__ static int vec_index(int split) {
    return threadIdx.x % layout::kPadded + split * THREADS;
  }

  // Where this thread's staged elements sit, built once per kernel: the element of
  // token 0 of its V-vector entry (of v, do), of its key row (of g, k, q and the
  // workspace) and of its token for v·do. Entries past V or K read the last one, and
  // tokens past T the last token, so that loads need no predicates or per-load index
  // arithmetic; commit() zeroes what they read.
  struct cursor {
    int64_t vec, key, token, T;
    int step_k, step_v, H;
    bool vec_in[kVecSplits], key_in;
  };
  __device__ static cursor make_cursor(const scan_args& a, sequence_span seq, int64_t h,
                                       int64_t row0) {
    const int n = threadIdx.x;
    cursor c;
    const int64_t j = vec_index(0);
    c.vec = ((seq.bos + vec_row()) * a.H + h) * a.V + (j < a.V ? j : a.V - 1);
#pragma unroll
    for (int split = 0; split < kVecSplits; ++split) c.vec_in[split] = vec_index(split) < a.V;
    c.key_in = key_row() < kRows && row0 + key_row() < a.K;
    c.key = (seq.bos * a.H + h) * a.K + (c.key_in ? row0 + key_row() : a.K - 1);
    c.token = (seq.bos + n) * a.H + h;  // for threads n < TC
    c.T = seq.T;
    c.step_k = int(a.H * a.K);
    c.step_v = int(a.H * a.V);
    c.H = int(a.H);
    return c;
  }

  // with_pdb: the reverse walk's chunk (rwkv6: its neighbours are the next tokens).
  __device__ static void load(prefetch& r, const scan_args& a, const cursor& c, int64_t t0,
                              bool with_pdb) {
    r.rows = int(c.T - t0 < TC ? c.T - t0 : TC);
    if constexpr (kRwkv6) {
      r.t0 = t0;
      r.left = c.T - t0;
    }
    const int shift = with_pdb ? kShift<true> : kShift<false>;
    auto neighbour = [&](int tt) {
      return with_pdb ? has_neighbour<true>(r, tt) : has_neighbour<false>(r, tt);
    };
    const int64_t vec = c.vec + t0 * c.step_v;
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      const Elem* src = static_cast<const Elem*>(which == 0 ? a.v : a.d_o) + vec;
      // rwkv6: the walk's update vector comes from the neighbouring token.
      const bool shifted = kRwkv6 && which == (with_pdb ? 1 : 0);
#pragma unroll
      for (int pass = 0; pass < kVecPasses; ++pass) {
        const int tt = pass * kVecRowsPerPass + vec_row(), last = r.rows - 1 - vec_row();
        const int at = shifted ? (neighbour(tt) ? pass * kVecRowsPerPass + shift : last) * c.step_v
                               : (tt < r.rows ? pass * kVecRowsPerPass : last) * c.step_v;
#pragma unroll
        for (int split = 0; split < kVecSplits; ++split)
          r.vec[which][pass][split] = src[at + (c.vec_in[split] ? split * THREADS : 0)];
      }
    }
    const int n = threadIdx.x;
    if (n < kRows * kParts) {
      const Elem *g = static_cast<const Elem*>(a.g) + c.key,
                 *k = static_cast<const Elem*>(a.k) + c.key,
                 *q = static_cast<const Elem*>(a.q) + c.key;
      const C* pdb = partial_db<C>(a) + c.key;
#pragma unroll
      for (int u = 0; u < kPartTokens; ++u) {
        const int tt = first_token() + u;
        const int64_t at = (t0 + (tt < r.rows ? tt : r.rows - 1)) * c.step_k;
        r.g[u] = g[at];
        r.k[u] = k[at];
        r.q[u] = q[at];
        r.pdb[u] = with_pdb ? pdb[at] : C(0);
        if constexpr (kRwkv6)
          r.next[u] = (with_pdb ? q : k)[neighbour(tt) ? at + shift * c.step_k : at];
      }
    }
    if (n < TC) r.vdo = token_dots<C>(a)[c.token + (t0 - (n < r.rows ? 0 : n)) * c.H];
    // rwkv6: v_{τ−1}·do_τ (forward), v_τ·do_{τ+1} (reverse: the next token's).
    if constexpr (kRwkv6)
      if (n < TC) {
        const int64_t token = c.token + (t0 - (n < r.rows ? 0 : n)) * c.H;
        r.xdo = cross_dots<C>(a)[with_pdb && n + 1 < r.left ? token + c.H : token];
      }
  }

  // Rows past K and tokens past T become a = 1 and add nothing. Each walk writes the
  // slots it reads (REVERSE: the reverse walk's).
  template <bool REVERSE>
  __device__ static void commit(const prefetch& r, C* buf, C scale, const cursor& c) {
#pragma unroll
    for (int which = 0; which < 2; ++which)
#pragma unroll
      for (int pass = 0; pass < kVecPasses; ++pass) {
        const int tt = pass * kVecRowsPerPass + vec_row();
        if (tt >= TC) continue;
#pragma unroll
        for (int split = 0; split < kVecSplits; ++split)
          buf[(which * TC + tt) * layout::kRow + layout::slot(vec_index(split))] =
              c.vec_in[split] &&
                      (kRwkv6 && which == (REVERSE ? 1 : 0) ? has_neighbour<REVERSE>(r, tt)
                                                            : tt < r.rows)
                  ? to_compute<C>(r.vec[which][pass][split])
                  : C(0);
      }
    const int n = threadIdx.x, row = key_row(), t_first = first_token();
    if (n < TC) buf[kVdo + n] = n < r.rows ? r.vdo : C(0);
    if constexpr (kRwkv6)
      if (n < TC) buf[kXdo + n] = (REVERSE ? n + 1 < r.left : n < r.rows) ? r.xdo : C(0);
    if (n / 32 >= kStagingWarps) return;  // whole warps: the shuffles below need them
    auto value = [&](const Elem(&x)[kPartTokens], int u) {
      return c.key_in && t_first + u < r.rows ? to_compute<C>(x[u]) : C(0);
    };
    // b_τ: this part's running sum, after the sum of the row's earlier parts (a scan
    // over the row's kParts lanes).
    C bs[kPartTokens], b = C(0);
#pragma unroll
    for (int u = 0; u < kPartTokens; ++u) bs[u] = b += value(r.g, u);
    C before = b;  // inclusive scan of the parts' sums, then minus this part's own
#pragma unroll
    for (int offset = 1; offset < kParts; offset *= 2) {
      const C other = __shfl_up_sync(0xffffffffu, before, offset, kParts);
      if (n % kParts >= offset) before += other;
    }
    before -= b;
    C bx[kPartTokens];  // rwkv6: b_{τ−1}
#pragma unroll
    for (int u = 0; u < kPartTokens; ++u) {
      bx[u] = u == 0 ? before : bs[u - 1] + before;
    }
#pragma unroll
    for (int u = 0; u < kPartTokens; ++u) bs[u] += before;
    const C b_last = __shfl_sync(0xffffffffu, bs[kPartTokens - 1], kParts - 1, kParts);
    // Step by step when a row of the thread's RJ decays past the rescaling range.
    const unsigned out_of_range =
        __ballot_sync(0xffffffffu, row < kRows && !(b_last >= -kMaxRescale<Elem, C>));
    const unsigned group_bits = kDecide == 32 ? 0xffffffffu : (1u << kDecide) - 1u;
    const bool step = (out_of_range >> (n % 32 / kDecide * kDecide)) & group_bits;
    if (row >= kRows) return;
    auto put = [&](int which, int tt, C x) {
      buf[kScalarBase + (which * TC + tt) * kScalarStride + row] = x;
    };
#pragma unroll
    for (int u = 0; u < kPartTokens; ++u) {
      const int tt = t_first + u;
      const C k = value(r.k, u), q = value(r.q, u);
      const C a = exp_of(value(r.g, u)), bt = step ? C(0) : bs[u];
      const C eb = step ? a : exp_of(bt), ebi = exp_of(-bt);
      put(kA, tt, a);
      put(kKRaw, tt, k);
      put(kQRaw, tt, q);
      if constexpr (kRwkv6) {
        const C nb = c.key_in && has_neighbour<REVERSE>(r, tt) ? to_compute<C>(r.next[u]) : C(0);
        if constexpr (REVERSE) {
          put(kQQ, tt, scale * nb * exp_of(bt));
          put(kEBI, tt, ebi);
          put(kPdb, tt, tt < r.rows ? r.pdb[u] : C(0));
          put(kQNext, tt, nb);
        } else {
          const C bp = step ? C(0) : bx[u];
          put(kKK, tt, step ? a * nb : nb * exp_of(-bp));
          put(kEB, tt, step ? C(1) : exp_of(bp));
          put(kKPrev, tt, nb);
        }
      } else if constexpr (REVERSE) {
        put(kQQ, tt, scale * q * exp_of(bt));
        put(kEBI, tt, ebi);
        put(kPdb, tt, tt < r.rows ? r.pdb[u] : C(0));
      } else {
        put(kKK, tt, k * ebi);
        put(kEB, tt, eb);
      }
    }
    if (n % kParts == 0) {
      buf[kBeta + row] = exp_of(step ? C(0) : b_last);
      buf[kFlag + row] = step ? C(1) : C(0);
    }
  }

  // x[r][e] *= β of row n0 + r: a rescaled chunk's U → S (forward walk) or G' → W
  // (reverse walk).
  __device__ static void scale_by_beta(C (&x)[RJ][L], const C* buf, int n0) {
#pragma unroll
    for (int r = 0; r < RJ; ++r) {
      const C beta = buf[kBeta + n0 + r];
#pragma unroll
      for (int e = 0; e < L; ++e) x[r][e] *= beta;
    }
  }

  // A thread's RJ rows × V-strip of a [B,H,K,V] state (h0, dht; Elem or fp32,
  // with_state_type): zero where the tensor is absent or the element is masked.
  __device__ static void load_state(const void* src, C (&x)[RJ][L], const scan_args& a,
                                    int64_t state0, int lane, int64_t i0) {
    with_state_type<Elem>(src, a, [&](const auto* s) {
#pragma unroll
      for (int r = 0; r < RJ; ++r)
#pragma unroll
        for (int e = 0; e < L; ++e) x[r][e] = state_value<C>(s, a, state0, i0 + r, lane * L + e);
    });
  }
};

}  // namespace glabench::parallel_scan
