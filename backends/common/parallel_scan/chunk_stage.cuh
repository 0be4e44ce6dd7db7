// Staging for the two column-layout kernels (forward, backward_dv): one chunk of TC
// tokens of the K-vectors, already turned into what the scan multiplies with, plus one
// per-column value x (v for the forward, do for dv) for the block's value columns.
//
// Chunk-local rescaling. Within a chunk starting at token t0, let
// b_τ = g_{t0} + … + g_τ (per key row i, ≤ 0 and falling). The state after token τ is
//   S_τ = diag(e^{b_τ}) · U_τ,   U_τ = S_{t0−1} + Σ_{s≤τ} (k_s e^{−b_s})ᵀ v_s,
// so with k̃ = k e^{−b} and q̃ = scale · q e^{b} staged here, the forward's token step is
// U += k̃ᵀv and o = q̃ U — two FMAs per state element instead of three — and the chunk
// ends with S = β ⊙ U, β = e^{b_last}. The backward's adjoint walks the same way in
// reverse (backward_dv_kernel.cuh). Every product k̃_s q̃_τ is e^{b_τ − b_s} k_s q_τ with
// s ≤ τ, a true decay ≤ 1, so nothing cancels; the factors add their own rounding
// (kMaxRescale below).
//
// rwkv6 reads the state before its token, o_τ = q_τ S_{τ−1} + bonus, so its q̃ carries
// the exclusive sum: q̃ = scale · q e^{b_{τ−1}} (b_{t0−1} = 0), and k̃_s q̃_τ is a decay
// ≤ 1 for s < τ. Its bonus, c_τ v_τ with c_τ = scale Σ_i q_τ[i] u[i] k_τ[i], is one
// scalar per token: the stagers leave each warp's share of c_τ in the buffer, and the
// writer of o_τ[j] (or dv_τ[j]) adds c_τ x_τ[j] after the reduction over the lanes.
//
// The factors must stay in range: e^{−b} overflows once a row's decay over the chunk
// passes the exponent range (g = −30 per token, say). A strip of L rows whose chunk
// decay exceeds kMaxRescale falls back to the step-by-step form for that chunk: its
// slots hold a = e^{g}, k and scale·q, β = 1, and its flag says so. Rows of one strip
// belong to one thread, so the choice is per thread and needs no barrier.
//
// Latency hiding (pipelined_chunks in scan_tile.cuh): load() issues a chunk's global
// loads into registers a whole chunk's compute ahead; commit() turns them into the
// staged values and writes them to the other shared-memory buffer. A thread stages every token of
// its key rows, so the cumulative sum over the chunk stays in its registers.
#pragma once

#include <type_traits>

#include "scan_args.hpp"
#include "scan_tile.cuh"

namespace glabench::parallel_scan {

// The largest chunk decay |b_last| taken in rescaled form. e^{kMaxRescale} times the
// inputs must stay far from overflow; and in fp32 the factors e^{±b} carry b's and
// the exponent's rounding, about |b|·1.4·2^-24 relative (measured on the H200:
// gla_mixed_gates fp32 o rel_l2 5.6e-7 with a limit of 64, rows decaying by 7 a token
// rescaled over 8 tokens; 1.1e-7 with those sums in fp64, which cost the forward 20%).
// For fp32 storage the limit is 16: that error stays under ~1.4e-6 on a rare strongly
// decaying row. For 16-bit storage it is 60 (e^{±60} ≈ 2^{±87}, every product one large
// and one small factor): the factors' error, under 5e-6, is far below bf16's rounding,
// and gates as strong as fla's benchmarks draw (log σ(x), x ~ N(0, 1), about −0.8 a
// token) or −exp(x), x ~ N(−0.5, 1), stay rescaled; at 16 they went step by step in
// most chunks, 1.8× slower. fp64 takes 64 (errors ≤ ~1e-14).
template <typename Elem, typename C>
inline constexpr C kMaxRescale = std::is_same_v<C, double> ? C(64)
                                 : sizeof(Elem) == 2       ? C(60)
                                                           : C(16);

// C is the compute type: compute_t<Elem>, or double for fp32 storage with an fp64 state
// (the forward's precise fp32 mode, launch.cuh), whose factors come from exp_pair.
template <recurrence OP, typename Elem, int NL, int L, int CJ, int TC, int THREADS,
          typename C_ = compute_t<Elem>>
struct chunk_stage {
  using C = C_;
  static constexpr bool kWiderState = !std::is_same_v<C, compute_t<Elem>>;
  using layout = strip_layout<C, NL, L>;
  static constexpr int kGroups = THREADS / NL;   // column groups per block
  static constexpr int kColumns = kGroups * CJ;  // value columns per block

  // One buffer: [3][TC] strip-layout vectors (a, k', q'), β, [TC][kColumns] x, one flag
  // per strip (1: step-by-step), and for rwkv6 [kBonusSlots][TC] warps' shares of c_τ.
  enum { kA = 0, kK = 1, kQ = 2 };
  static constexpr bool kBonus = OP == recurrence::rwkv6;
  static constexpr int kBeta = 3 * TC * layout::kRow;
  static constexpr int kCols = kBeta + layout::kRow;
  static constexpr int kFlags = kCols + TC * kColumns;
  static constexpr int kBonusBase = kFlags + NL + (4 - NL % 4) % 4;
  static constexpr int kBonusSlots =
      kBonus ? (layout::kPadded < THREADS ? layout::kPadded : THREADS) / 32 : 0;
  static constexpr int kBufferValues = kBonusBase + (kBonusSlots * TC + 3) / 4 * 4;

  // Key rows: thread n stages rows n, n + THREADS, … of every token of the chunk.
  static_assert(layout::kPadded % 32 == 0, "whole warps stage key rows");
  static_assert(32 % L == 0, "a strip's rows lie in one warp");
  static constexpr int kRowsPerThread = (layout::kPadded + THREADS - 1) / THREADS;
  // The fp64 state's staging (kWiderState) costs the threads that do it about half a
  // chunk's compute, and where THREADS ≥ 2 × the padded rows only the first half would
  // stage while the rest wait at the barrier. There each row's tokens are split between
  // kParts threads (n and n + kPadded): each sums the row's gates over the whole chunk
  // but turns only its own kPartTokens tokens into factors.
  static constexpr int kParts = kWiderState && THREADS >= 2 * layout::kPadded ? 2 : 1;
  static constexpr int kPartTokens = TC / kParts;
  // commit()'s fast form for a warp's rows that are all inside K, in a whole chunk, and
  // rescaled (nearly every chunk): no masks, no selects of the step-by-step form, no
  // decay slots. Taken where it was measured faster: bf16 storage, 8-token chunks, and
  // blocks where at most half the warps stage, whose staging warps set the pace (the
  // wide geometry; also narrow blocks for heads ≤ 64, which were not timed). H100,
  // 2026-11-25, tile sweep at B4 T2048 H16 D128, wide width-4 forward:
  // rwkv6 0.4654 → 0.4466 ms, gla 0.4250 → 0.4167 ms. Elsewhere it lost: fp32 wide
  // (gla 0.4032 → 0.4072), the narrow width-4 bf16 kernels (gla forward 0.4116 →
  // 0.4516), 16-token chunks (rwkv6 width 2 at B4 T1024 H4 D100: 0.177 → 0.190).
  // fp16 takes it as bf16 does.
  static constexpr bool kFastRows =
      sizeof(Elem) == 2 && kParts == 1 && THREADS >= 2 * layout::kPadded && TC <= 8;
  // Column values: kColRowsPerPass tokens at once.
  static_assert(THREADS % kColumns == 0, "column values: whole rows per pass");
  static constexpr int kColRowsPerPass = THREADS / kColumns;
  static constexpr int kColPasses = (TC + kColRowsPerPass - 1) / kColRowsPerPass;

  struct prefetch {
    Elem g[kRowsPerThread][TC], k[kRowsPerThread][kPartTokens], q[kRowsPerThread][kPartTokens];
    Elem col[kColPasses];
    int rows;  // tokens of the chunk before T
  };

  struct source {
    const Elem* g;
    const Elem* k;
    const Elem* q;
    const Elem* x;  // per-column input, [B,T,H,V]
  };

  // The compute-type views of one buffer.
  __device__ static const C* vec(const C* buf, int which, int tt) {
    return buf + (which * TC + tt) * layout::kRow;
  }
  __device__ static const C* beta(const C* buf) { return buf + kBeta; }
  __device__ static const C* cols(const C* buf, int tt) { return buf + kCols + tt * kColumns; }
  __device__ static bool stepwise(const C* buf, int strip) { return buf[kFlags + strip] != C(0); }

  __device__ static int key_row(int n) {
    return kParts == 1 ? int(threadIdx.x) + n * THREADS : int(threadIdx.x) % layout::kPadded;
  }
  __device__ static int part() { return kParts == 1 ? 0 : int(threadIdx.x) / layout::kPadded; }
  // Whether this thread stages key row key_row(n) (whole warps: past the padded rows, or
  // past the parts, they do not).
  __device__ static bool stages(int n) { return key_row(n) < layout::kPadded && part() < kParts; }
  __device__ static int col_row() { return threadIdx.x / kColumns; }
  __device__ static int col_index() { return threadIdx.x % kColumns; }

  // Where this thread's staged elements sit, built once per kernel: the element of
  // token 0 of its key rows (of g, k, q) and of its column value (of x), and the steps
  // to the next token. Rows past K and columns past V read the last one instead, and
  // tokens past T the last token, so that loads need no predicates or per-load index
  // arithmetic; commit() zeroes what they read.
  struct cursor {
    int64_t key[kRowsPerThread], col, T;
    int step_k, step_v;
    bool key_in[kRowsPerThread], col_in;
    C u[kRowsPerThread];  // rwkv6: the bonus of the thread's key rows (0 past K)
  };
  __device__ static cursor make_cursor(const scan_args& a, sequence_span seq, int64_t h,
                                       int64_t col0) {
    cursor c;
#pragma unroll
    for (int n = 0; n < kRowsPerThread; ++n) {
      const int64_t i = key_row(n);
      c.key_in[n] = i < a.K;
      c.key[n] = (seq.bos * a.H + h) * a.K + (c.key_in[n] ? i : a.K - 1);
      if constexpr (kBonus)
        c.u[n] = c.key_in[n] && stages(n)
                     ? to_compute<C>(static_cast<const Elem*>(a.u)[h * a.K + i])
                     : C(0);
    }
    const int64_t j = col0 + col_index();
    c.col_in = j < a.V;
    c.col = (seq.bos * a.H + h) * a.V + (c.col_in ? j : a.V - 1);
    c.T = seq.T;
    c.step_k = int(a.H * a.K);
    c.step_v = int(a.H * a.V);
    return c;
  }

  __device__ static void load(prefetch& r, const source& s, const cursor& c, int64_t t0) {
    r.rows = int(c.T - t0 < TC ? c.T - t0 : TC);
#pragma unroll
    for (int n = 0; n < kRowsPerThread; ++n) {
      if (!stages(n)) continue;
      const int64_t key = c.key[n] + t0 * c.step_k;
      const Elem *g = s.g + key, *k = s.k + key, *q = s.q + key;
      if constexpr (kParts == 1) {
#pragma unroll
        for (int tt = 0; tt < TC; ++tt) {
          r.g[n][tt] = *g;
          r.k[n][tt] = *k;
          r.q[n][tt] = *q;
          const int step = tt + 1 < r.rows ? c.step_k : 0;
          g += step, k += step, q += step;
        }
      } else {  // every token's gate; this part's tokens of k and q
#pragma unroll
        for (int tt = 0; tt < TC; ++tt) {
          r.g[n][tt] = *g;
          g += tt + 1 < r.rows ? c.step_k : 0;
        }
        const int first = part() * kPartTokens,
                  start = (first < r.rows ? first : r.rows - 1) * c.step_k;
        k += start, q += start;
#pragma unroll
        for (int u = 0; u < kPartTokens; ++u) {
          r.k[n][u] = *k;
          r.q[n][u] = *q;
          const int step = first + u + 1 < r.rows ? c.step_k : 0;
          k += step, q += step;
        }
      }
    }
    const Elem* x = s.x + c.col + t0 * c.step_v;
#pragma unroll
    for (int pass = 0; pass < kColPasses; ++pass) {
      const int tt = pass * kColRowsPerPass + col_row();
      r.col[pass] = x[(tt < r.rows ? tt : r.rows - 1) * c.step_v];
    }
  }

  // Rows past K and tokens past T become g = 0 (a = 1, b unchanged) and k = q = 0, so
  // they leave the state alone and add nothing. Branch-free: a strip's factors e^{∓b}
  // become 1 when it goes step by step.
  __device__ static void commit(const prefetch& r, C* buf, C q_scale, const cursor& c) {
    C bonus[kPartTokens];  // rwkv6: this thread's share of c_τ for its tokens
#pragma unroll
    for (int u = 0; u < kPartTokens; ++u) bonus[u] = C(0);
#pragma unroll
    for (int n = 0; n < kRowsPerThread; ++n) {
      const int i = key_row(n);
      if (!stages(n)) continue;
      // bf16 through masked_bf16 (scan_tile.cuh); fp32 and fp64 keep the form their
      // timings were taken with (routed through one shared helper, their SASS changed).
      // x[n][index] in the compute type, zero past K or (token tt) past T.
      auto value = [&](const auto& x, int index, int tt) {
        if constexpr (std::is_same_v<Elem, __nv_bfloat16>)
          return masked_bf16<C>(c.key_in[n] && tt < r.rows, x[n][index]);
        else if constexpr (kWiderState)  // one select, in the storage type
          return to_compute<C>(c.key_in[n] && tt < r.rows ? x[n][index] : Elem(0));
        else
          return c.key_in[n] && tt < r.rows ? to_compute<C>(x[n][index]) : C(0);
      };
      // kFastRows: the warp's rows all inside K in a whole chunk (decided for the whole
      // warp), and below, the strip rescaled (a strip going step by step takes the
      // general form).
      const bool full = kFastRows && r.rows == TC && __all_sync(0xffffffffu, c.key_in[n]);
      auto unmasked = [&](const auto& x, int index) {  // only reached at 16 bits (kFastRows)
        if constexpr (std::is_same_v<Elem, __nv_bfloat16>)
          return widen_bf16<C>(x[n][index]);
        else
          return to_compute<C>(x[n][index]);
      };
      C bs[TC], bx[TC], b = C(0);  // b_τ of this row, and (rwkv6) b_{τ−1}
      if (full) {
#pragma unroll
        for (int tt = 0; tt < TC; ++tt) {
          bx[tt] = b;
          bs[tt] = b += unmasked(r.g, tt);
        }
      } else {
#pragma unroll
        for (int tt = 0; tt < TC; ++tt) {
          bx[tt] = b;
          bs[tt] = b += value(r.g, tt, tt);
        }
      }
      // Step by step if any row of the strip decays past the rescaling range (or is NaN).
      const unsigned out_of_range = __ballot_sync(0xffffffffu, !(b >= -kMaxRescale<Elem, C>));
      const int strip_shift = int(threadIdx.x) % 32 / L * L;
      const bool step = (out_of_range >> strip_shift) & ((L == 32) ? 0xffffffffu : (1u << L) - 1u);
      const int slot = layout::slot(i);
      if constexpr (kFastRows) {
        if (full && !step) {
#pragma unroll
          for (int tt = 0; tt < TC; ++tt) {
            const C k = unmasked(r.k, tt), q = q_scale * unmasked(r.q, tt);
            if constexpr (kBonus) bonus[tt] += q * c.u[n] * k;
            buf[(kK * TC + tt) * layout::kRow + slot] = k * exp_of(-bs[tt]);
            buf[(kQ * TC + tt) * layout::kRow + slot] = q * exp_of(kBonus ? bx[tt] : bs[tt]);
          }
          buf[kBeta + slot] = exp_of(b);
          if (i % L == 0) buf[kFlags + i / L] = C(0);
          continue;
        }
      }
      // This thread's tokens: all of them, or part() of the split. Its u-th token's entry
      // of a whole-chunk array, without indexing registers by a runtime value.
      const int first = part() * kPartTokens;
      auto own = [&](const C(&x)[TC], int u) { return first == 0 ? x[u] : x[kPartTokens + u]; };
#pragma unroll
      for (int u = 0; u < kPartTokens; ++u) {
        const int tt = first + u;
        const C k = value(r.k, u, tt), q = q_scale * value(r.q, u, tt),
                bt = step ? C(0) : own(bs, u);
        // The b of q̃: b_τ, or for rwkv6 b_{τ−1}.
        const C bq = kBonus ? (step ? C(0) : own(bx, u)) : bt;
        if constexpr (kBonus) bonus[u] += q * c.u[n] * k;
        if constexpr (kWiderState) {
          C up, down, a, unused;
          exp_pair(bt, up, down);
          if constexpr (kBonus) exp_pair(bq, up, unused);
          if (step) {
            C gs[TC];
#pragma unroll
            for (int t = 0; t < TC; ++t) gs[t] = value(r.g, t, t);
            exp_pair(own(gs, u), a, unused);
            buf[(kA * TC + tt) * layout::kRow + slot] = a;
          }
          buf[(kK * TC + tt) * layout::kRow + slot] = k * down;
          buf[(kQ * TC + tt) * layout::kRow + slot] = q * up;
        } else {
          if (step) buf[(kA * TC + tt) * layout::kRow + slot] = exp_of(value(r.g, tt, tt));
          buf[(kK * TC + tt) * layout::kRow + slot] = k * exp_of(-bt);
          buf[(kQ * TC + tt) * layout::kRow + slot] = q * exp_of(bq);
        }
      }
      if (first != 0) continue;  // β and the flag: part 0
      if constexpr (kWiderState) {
        C up, down;
        exp_pair(step ? C(0) : b, up, down);
        buf[kBeta + slot] = up;
      } else {
        buf[kBeta + slot] = exp_of(step ? C(0) : b);
      }
      if (i % L == 0) buf[kFlags + i / L] = step ? C(1) : C(0);
    }
    if constexpr (kBonus) {
      if (stages(0)) {  // whole warps: each leaves its rows' sum per token
        const int slot = key_row(0) / 32, first = part() * kPartTokens;
        // A reduce-scatter over the warp: 9 shuffles for 8 tokens, where a sum per token
        // would take 40.
        reduce_scatter<32>(bonus, int(threadIdx.x) % 32,
                           [&](int u, C sum) { buf[kBonusBase + slot * TC + first + u] = sum; });
      }
    }
#pragma unroll
    for (int pass = 0; pass < kColPasses; ++pass) {
      const int tt = pass * kColRowsPerPass + col_row();
      if (tt >= TC) continue;
      C x;
      if constexpr (std::is_same_v<Elem, __nv_bfloat16>)
        x = masked_bf16<C>(c.col_in && tt < r.rows, r.col[pass]);
      else
        x = c.col_in && tt < r.rows ? to_compute<C>(r.col[pass]) : C(0);
      buf[kCols + tt * kColumns + col_index()] = x;
    }
  }

  // x[e][c] *= f[e], f this lane's strip of the vector at src (β, or a step's decays).
  __device__ static void scale_strip(C (&x)[L][CJ], const C* src, int lane) {
    C f[L];
    load_strip<L>(src + lane * layout::kStride, f);
#pragma unroll
    for (int e = 0; e < L; ++e)
#pragma unroll
      for (int c = 0; c < CJ; ++c) x[e][c] *= f[e];
  }

  // rwkv6: c_τ of token tt, from the warps' shares.
  __device__ static C bonus_of(const C* buf, int tt) {
    C sum = C(0);
#pragma unroll
    for (int s = 0; s < kBonusSlots; ++s) sum += buf[kBonusBase + s * TC + tt];
    return sum;
  }

  // Element (the sequence's first token, h, j0) of a [B,T,H,V] output: where store_chunk
  // writes the thread's first column j0.
  __device__ static int64_t output_base(const scan_args& a, sequence_span seq, int64_t h,
                                        int64_t j0) {
    return (seq.bos * a.H + h) * a.V + j0;
  }
  // Reduces a chunk's per-token partial sums over the lanes and stores them to a
  // [B,T,H,V] output at output_base's element `base` (64-bit base, 32-bit offsets) of a
  // sequence of where.T tokens; rwkv6 adds c_τ x_τ[j] (buf: the chunk's buffer; group: the
  // thread's column group).
  __device__ static void store_chunk(Elem* out, C (&part)[TC * CJ], const scan_args& a,
                                     const cursor& where, int64_t base, int64_t chunk, int64_t j0,
                                     int lane, const C* buf, int group) {
    Elem* at = out + base + chunk * TC * where.step_v;
    const int rows = int(where.T - chunk * TC < TC ? where.T - chunk * TC : TC);
    const int columns = int(a.V - j0), step_v = int(a.H * a.V);
    reduce_scatter<NL>(part, lane, [&](int n, C sum) {
      const int tt = n / CJ, c = n % CJ;
      if constexpr (kBonus) sum += bonus_of(buf, tt) * cols(buf, tt)[group * CJ + c];
      if (tt < rows && c < columns) at[tt * step_v + c] = to_storage<Elem>(sum);
    });
  }

  // A thread's K-strip × CJ columns of a [B,H,K,V] state (h0, dht; Elem or fp32,
  // with_state_type): zero where the tensor is absent or the element is masked.
  __device__ static void load_state(const void* src, C (&x)[L][CJ], const scan_args& a,
                                    int64_t state0, int lane, int64_t j0) {
    with_state_type<Elem>(src, a, [&](const auto* s) {
#pragma unroll
      for (int e = 0; e < L; ++e)
#pragma unroll
        for (int c = 0; c < CJ; ++c) x[e][c] = state_value<C>(s, a, state0, lane * L + e, j0 + c);
    });
  }
  __device__ static void store_state(void* dst, const C (&x)[L][CJ], const scan_args& a,
                                     int64_t state0, int lane, int64_t j0) {
#pragma unroll
    for (int e = 0; e < L; ++e)
#pragma unroll
      for (int c = 0; c < CJ; ++c) {
        const int64_t i = lane * L + e, j = j0 + c;
        if (i < a.K && j < a.V) store_state_value<Elem>(dst, a, state0 + i * a.V + j, x[e][c]);
      }
  }
};

}  // namespace glabench::parallel_scan
