// The bf16 chunk walk's common ground: its sizes, the block's shared-memory layout, the
// kernel arguments, the element and fragment addresses in the swizzled tiles, which
// state rows a warp holds, and the loads of a chunk's tiles (cp.async).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "../ptx_primitives.cuh"
#include "../tensor_layout.cuh"
#include "../walk_plan.hpp"
#include "strong_features.hpp"

namespace glabench::chunked::walk {

using bf16 = __nv_bfloat16;

inline constexpr int KROW = KP * 2, VROW = BV * 2;  // bytes of a shared-memory row
inline constexpr float kLog2e = 1.4426950408889634f;
// A chunk whose gates sum to ≥ −kMildLog2 in every feature is mild: one reference for the
// whole chunk, its end, q̄ ≤ |q|·2^96 (walk_prepare_qg_kg_mild). The walk tests the chunk's
// sums only where no sub-chunk's fall below −kMildSubLog2 (a sure sign of a steep chunk),
// and needs no test where every sub-chunk's stay ≥ −kMildLog2 / 4.
inline constexpr float kMildLog2 = 96.f, kMildSubLog2 = 56.f;

// The first row of k̄⁽ⁱ⁾ (16(i+1) rows, tokens 0 … 16i+15) in the stacked array.
__host__ __device__ constexpr int kbar_row0(int i) {
  return 8 * i * (i + 1);
}

// The block's shared memory, byte offsets. v is double-buffered, loaded a chunk ahead;
// q, k and g have one buffer each, refilled once stage 2 has read them. q̄ and the
// diagonal blocks' k̄ carry the residual of their bf16 rounding (the *_lo arrays). A mild
// chunk keeps k̂'s residual in kdiag_lo; the backward's dS walk keeps q̃ in khat, the state
// update's operand.
struct layout {
  static constexpr uint32_t tile_k = C * KROW, tile_v = C * VROW;
  static constexpr uint32_t q = 0, k = q + tile_k, g = k + tile_k, v = g + tile_k;
  static constexpr uint32_t qbar = v + 2 * tile_v, qbar_lo = qbar + tile_k, qtil = qbar_lo + tile_k;
  static constexpr uint32_t khat = qtil + tile_k, kdiag_lo = khat + tile_k,
                            kbar = kdiag_lo + tile_k;
  static constexpr uint32_t s = kbar + kbar_row0(SUBS) * KROW;
  static constexpr uint32_t tots = s + KP * VROW;         // float [SUBS][KP]
  static constexpr uint32_t corr = tots + SUBS * KP * 4;  // float [SUBS][SUB][SUB]
  // int [2] each, by chunk parity: a strong feature (flag); a sub-chunk below
  // −kMildSubLog2 (steep, the forward's)
  static constexpr uint32_t flag = corr + SUBS * SUB * SUB * 4, steep = flag + 8;
  // rwkv6 (args::u), beside each v buffer: v's row after the tile, the bonus of the tile's
  // rows one on (float [C]), which the walk takes itself, and k's row after the tile.
  static constexpr uint32_t next_bonus = VROW, next_k = VROW + C * 4;
  static constexpr uint32_t tile_next = next_k + KROW;
  static constexpr uint32_t next = flag + 16;
  static constexpr uint32_t bytes = next + 2 * tile_next;
};
static_assert(layout::bytes <= 227 * 1024, "one block per SM");

// The gradient walk's shared memory (../backward_bf16_mma_grads.cuh), byte offsets: one chunk's
// tiles of 64 rows × 128 bf16 columns (q, k, v, do and the operands q̄, k̄, k̆; V ≤ 128; stage 2
// overwrites q and k with the residuals of q̄ and k̄), S_n and dS_n as 128 × 128 bf16
// operands, the log2 gates l cumulative inside each 16-token sub-chunk as fp32 rows of
// GLD floats (the gate tile g loads there first), each sub-chunk's gate totals T_m and
// 2^{T_m}, the gate Γ_m before each sub-chunk (Γ_4 = G[C−1]), the column sums that dg's
// scans pass between warps, Y_n, and each sub-chunk's strong features (a bit a feature).
struct grads_layout {
  static constexpr int GLD = KP + 8;  // a row of l: conflict-free 8-byte reads
  static constexpr uint32_t tile = C * KROW, state = KP * KROW;
  static constexpr uint32_t q = 0, k = q + tile, v = k + tile, d_o = v + tile;
  static constexpr uint32_t qbar = d_o + tile, kbar = qbar + tile, kend = kbar + tile;
  static constexpr uint32_t qbar_lo = q, kbar_lo = k;
  static constexpr uint32_t s = kend + tile, ds = s + state;
  static constexpr uint32_t l = ds + state, g = l;               // float [C][GLD]; bf16 g first
  static constexpr uint32_t tots = l + C * GLD * 4;              // float [SUBS][KP]: T_m
  static constexpr uint32_t etots = tots + SUBS * KP * 4;        // float [SUBS][KP]: 2^{T_m}
  static constexpr uint32_t gam = etots + SUBS * KP * 4;         // float [SUBS + 1][KP]: Γ_m
  static constexpr uint32_t colsum = gam + (SUBS + 1) * KP * 4;  // float [2][SUBS][KP]
  static constexpr uint32_t y = colsum + 2 * SUBS * KP * 4;      // float [KP]
  static constexpr uint32_t strong = y + KP * 4;                 // unsigned [SUBS][KP / 32]
  static constexpr uint32_t bytes = strong + SUBS * KP / 8;
};
static_assert(grads_layout::bytes <= 227 * 1024, "one block per SM");

struct args {
  const bf16 *q, *k, *v, *g;
  bf16* o;
  // rwkv6 (launch.hpp's call::u, its u [H][K]): q read one token on, o's row t + 1 written
  // from row t plus the bonus scale·r_{t+1}·(u ⊙ k_{t+1}) times v_{t+1}. Null: gla.
  const bf16* u;
  // States (h0, ht; the backward's dht, dh0 alike): bf16, or fp32 where state_fp32.
  const void* h0;
  void* ht;
  bool state_fp32;
  int H, K, V, NT;
  int64_t T;
  float scale;
  // The sequence split (chunk_walk_segment_states_kernel): the walk runs `segs`
  // segments of `seg_chunks` chunks, one block each (grid z). Each segment but the last
  // is cut into `subs` pieces of `sub_chunks` chunks; the first pass leaves piece m's
  // state contribution in dstate [m][B·H][V slabs][KP][BV] and its summed log2 gates in
  // dgate [m][B·H][KP]. One segment: no split, both unused.
  int segs, seg_chunks, subs, sub_chunks;
  float *dstate, *dgate;
  // The dS walk's pieces start at this segment (walk_plan.hpp's dstate_piece): 1, or 0
  // where a sequence-parallel rank's whole dS contribution is wanted.
  int dfirst_seg;
  // Rows only 8-byte aligned (K or V a multiple of 4, not of 8): the launch picks the
  // kernels' kNarrow instantiation, whose loads are of 8 bytes.
  bool narrow;
};

template <class T>
__device__ __forceinline__ T& at(unsigned char* smem, uint32_t off) {
  return *reinterpret_cast<T*>(smem + off);
}
__device__ __forceinline__ float2 pair_at(const unsigned char* smem, uint32_t off) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(smem + off));
}

// A warp's 32 lanes each holding 16 partial sums (of 16 rows): the sums over the lanes by a
// transposing reduction, 16 shuffles (the gradient walk's Y_n).
// Lanes l and l ^ 2N each keep N of their 2N sums — the upper lane the upper N — and add the
// other's: after N = 8, 4, 2, 1, lane l holds row (l >> 1) & 15's sum over the lanes l, l ^ 2,
// … (16 of them), with its row's other half in lane l ^ 1.
template <int N>
__device__ __forceinline__ void fold_rows(float (&acc)[SUB], int lane) {
  const bool upper = lane & (2 * N);
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const float send = upper ? acc[i] : acc[i + N], keep = upper ? acc[i + N] : acc[i];
    acc[i] = keep + __shfl_xor_sync(0xffffffffu, send, 2 * N);
  }
  if constexpr (N > 1) fold_rows<N / 2>(acc, lane);
}
__device__ __forceinline__ float sum_rows(float (&acc)[SUB], int lane) {
  fold_rows<SUB / 2>(acc, lane);
  return acc[0] + __shfl_xor_sync(0xffffffffu, acc[0], 1);  // row (lane >> 1) & 15
}

// A chunk's summed log2 gate of state row (feature) `row`, from its sub-chunks' totals in
// order: the order every state's decay takes.
__device__ __forceinline__ float chunk_gate_sum(const unsigned char* smem, int row) {
  const float* t = reinterpret_cast<const float*>(smem + layout::tots);
  return ((t[row] + t[KP + row]) + t[2 * KP + row]) + t[3 * KP + row];
}

// The byte offset of feature pair p (features 2p, 2p+1) of row r in a K-wide tile.
__device__ __forceinline__ uint32_t pair_offset(int r, int p) {
  return tc::swizzle<KROW>(r, p >> 2) + ((p & 3) << 2);
}

// ---- fragment addresses --------------------------------------------------------------
// A lane's ldmatrix addresses, as byte offsets from the shared-memory base. In a tile of
// 256-byte rows the 16-byte chunk 2kk + h of row r sits at r·256 + (((2kk + h) ^ r%8)·16)
// = (r·256 + ((h ^ r%8)·16)) ^ (kk·32): one XOR a k-step. Row steps of 16 add.
struct lane_offsets {
  uint32_t a_rows;     // A operand (16 rows × 16 features) of a K-wide tile: row lane%16
  uint32_t b_rows;     // B operand from a K-wide tile of keys (two n8 tiles): key row
  uint32_t t_state;    // k̂ᵀ as A operand (transposing): token row, this warp's features
  uint32_t t_vals[4];  // v (or S) as B operand (transposing), 16-column group np of 4
  uint32_t t_half[2];  // the same for this warp's output columns: groups 2·half + np
  __device__ lane_offsets(int warp, int lane) {
    const int x = lane & 7, h16 = lane >> 4, h8 = (lane >> 3) & 1;
    a_rows = (lane & 15) * KROW + ((h16 ^ x) << 4);
    b_rows = (x + (h16 << 3)) * KROW + ((h8 ^ x) << 4);
    t_state = (x + (h16 << 3)) * KROW + (((2 * warp + h8) ^ x) << 4);
    const int r16 = x + (h8 << 3);
#pragma unroll
    for (int np = 0; np < 4; ++np) t_vals[np] = r16 * VROW + (((2 * np + h16) ^ x) << 4);
#pragma unroll
    for (int np = 0; np < 2; ++np)
      t_half[np] = r16 * VROW + (((4 * (warp & 1) + 2 * np + h16) ^ x) << 4);
  }
};
__device__ __forceinline__ uint32_t kstep(uint32_t lane_off, int kk) {
  return lane_off ^ (kk << 5);
}

// The same addresses for any 16×16 block of a tile of 256-byte rows (KROW), as the
// backward's gradient walk (../backward_bf16_mma_grads.cuh) reads its operands. With ldmatrix's
// matrix m = lane/8 and its row lane%8:
//   frag_a   A operand, stored [row][k]: rows row0 + lane%16, k half lane/16;
//   frag_b   B operand of two n8 tiles, stored [n][k]: n rows n0 + lane%8 + 8·(lane/16),
//            k half (lane/8)%2;
//   frag_bt  B operand of two n8 tiles, stored [k][n] (ldmatrix .trans): k rows
//            k0 + lane%8 + 8·((lane/8)%2), n half lane/16.
__device__ __forceinline__ uint32_t frag_a(int row0, int k0, int lane) {
  return tc::swizzle<KROW>(row0 + (lane & 15), (k0 >> 3) + (lane >> 4));
}
__device__ __forceinline__ uint32_t frag_b(int n0, int k0, int lane) {
  return tc::swizzle<KROW>(n0 + (lane & 7) + ((lane >> 4) << 3), (k0 >> 3) + ((lane >> 3) & 1));
}
__device__ __forceinline__ uint32_t frag_bt(int k0, int n0, int lane) {
  return tc::swizzle<KROW>(k0 + (lane & 7) + (((lane >> 3) & 1) << 3), (n0 >> 3) + (lane >> 4));
}

// ---- the state rows of a warp ----------------------------------------------------------
// Warp w holds rows 16w … 16w+15 of the K×64 state as eight m16n8 accumulator tiles.
struct state_rows {
  int lo, hi;  // the feature rows of c0/c1 and c2/c3
  __device__ explicit state_rows(int warp, int lane) : lo(16 * warp + (lane >> 2)), hi(lo + 8) {}
};

// ---- the block's tensors and loads ---------------------------------------------------
// The loads of rows only 8-byte aligned (`narrow`; others take one 16-byte cp.async a
// vector): columns 8c … 8c+7 of a row, of which the first n (0, 4 or 8) are real, into
// their 16-byte slot at dst as two 8-byte copies, zeros for the rest. `any`: a valid
// address for the copies that read nothing.
__device__ __forceinline__ void cp_async_cols8(uint32_t dst, const bf16* row, int c, int n,
                                               const bf16* any) {
  tc::cp_async8(dst, n ? row + 8 * c : any, n ? 8 : 0);
  tc::cp_async8(dst + 8, n == 8 ? row + 8 * c + 4 : any, n == 8 ? 8 : 0);
}
// The real columns of vector c of a row of `cols`, or 0 for a row past the end.
__device__ __forceinline__ int cols8_in(bool row_in, int c, int cols) {
  return row_in ? max(0, min(8, cols - 8 * c)) : 0;
}

// One head's q, k, g (from feature 0) and v, o (from column v0) in the [B,T,H,D] layout,
// and the cp.async loads of a chunk's tiles; zeros past T, K and V.
struct walk_io {
  enum : int { kQ = 1, kK = 2, kG = 4 };
  const bf16 *q, *k, *g, *v;
  const bf16* u;  // the head's row of args::u, or null
  int64_t o_at;   // the head's column v0 of args::o, as an element offset
  int64_t ks, vs, T;
  int K, V, v0;
  bool narrow;
  uint32_t sm;
  // `values`: the V-wide input the walk reads (v; do in the backward's dS walk). `narrow_`:
  // the kernel's kNarrow (a constant, so each instantiation keeps only its own loads).
  __device__ walk_io(const args& a, uint32_t sm_, bool narrow_, const bf16* values = nullptr)
      : ks(static_cast<int64_t>(a.H) * a.K),
        vs(static_cast<int64_t>(a.H) * a.V),
        T(a.T),
        K(a.K),
        V(a.V),
        v0(blockIdx.x * BV),
        narrow(narrow_),
        sm(sm_) {
    const int bh = blockIdx.y;
    const int64_t head = head_row(bh, a.H, a.T);
    q = a.q + head * a.K, k = a.k + head * a.K, g = a.g + head * a.K;
    o_at = head * a.V + v0;
    v = (values ? values : a.v) + o_at;
    u = a.u ? a.u + static_cast<int64_t>(bh % a.H) * a.K : nullptr;
  }
  // The K-wide tiles `which` (kQ | kK | kG) of the chunk at t0. kBonus: the forward walk
  // that takes rwkv6's bonus (args::u), q read one token on (rows to T − 1, zeros after);
  // a constant, so that gla's walks keep none of it.
  template <bool kBonus = false>
  __device__ void load_keyed(int64_t t0, int which) const {
    const bf16* q_rows = kBonus ? q + ks : q;
    const int64_t Tq = kBonus ? T - 1 : T;
#pragma unroll
    for (int it = 0; it < C * (KROW / 16) / THREADS; ++it) {
      const int i = threadIdx.x + it * THREADS, r = i >> 4, c = i & 15;
      const uint32_t dst = sm + tc::swizzle<KROW>(r, c);
      if (narrow) {
        const int n = cols8_in(t0 + r < T, c, K);
        const int64_t row = n ? (t0 + r) * ks : 0;
        if (which & kQ) {
          const int nq = t0 + r < Tq ? n : 0;
          cp_async_cols8(dst + layout::q, q_rows + (nq ? row : 0), c, nq, q);
        }
        if (which & kK) cp_async_cols8(dst + layout::k, k + row, c, n, k);
        if (which & kG) cp_async_cols8(dst + layout::g, g + row, c, n, g);
        continue;
      }
      const bool in = t0 + r < T && c * 8 < K;
      const int64_t at_ = in ? (t0 + r) * ks + c * 8 : 0;
      if (which & kQ) {
        const bool in_q = in && t0 + r < Tq;
        tc::cp_async16(dst + layout::q, in_q ? q_rows + at_ : q, in_q ? 16 : 0);
      }
      if (which & kK) tc::cp_async16(dst + layout::k, k + at_, in ? 16 : 0);
      if (which & kG) tc::cp_async16(dst + layout::g, g + at_, in ? 16 : 0);
    }
  }
  template <bool kBonus = false>
  __device__ void load_values(int buf, int64_t t0) const {
#pragma unroll
    for (int it = 0; it < C * (VROW / 16) / THREADS; ++it) {
      const int i = threadIdx.x + it * THREADS, r = i >> 3, c = i & 7;
      const uint32_t dst = sm + layout::v + buf * layout::tile_v + tc::swizzle<VROW>(r, c);
      if (narrow) {
        const int n = cols8_in(t0 + r < T, c, V - v0);
        cp_async_cols8(dst, v + (n ? (t0 + r) * vs : 0), c, n, v);
        continue;
      }
      const bool in = t0 + r < T && v0 + c * 8 < V;
      tc::cp_async16(dst, in ? v + (t0 + r) * vs + c * 8 : v, in ? 16 : 0);
    }
    if (!kBonus) return;
    // rwkv6: v's row t0 + C (threads 0–7) and k's (8–23), rows of 16-byte vectors.
    const int c = threadIdx.x;
    const uint32_t next = sm + layout::next + buf * layout::tile_next;
    const int64_t r = t0 + C;
    if (c < 8) {
      if (narrow) {
        const int n = cols8_in(r < T, c, V - v0);
        cp_async_cols8(next + 16 * c, v + (n ? r * vs : 0), c, n, v);
      } else {
        const bool in = r < T && v0 + c * 8 < V;
        tc::cp_async16(next + 16 * c, in ? v + r * vs + c * 8 : v, in ? 16 : 0);
      }
    } else if (c < 8 + KROW / 16) {
      const int ck = c - 8;
      const uint32_t dst = next + layout::next_k + 16 * ck;
      if (narrow) {
        const int n = cols8_in(r < T, ck, K);
        cp_async_cols8(dst, k + (n ? r * ks : 0), ck, n, k);
      } else {
        const bool in = r < T && ck * 8 < K;
        tc::cp_async16(dst, in ? k + r * ks + ck * 8 : k, in ? 16 : 0);
      }
    }
  }
};

// 64 rows × 128 bf16 columns from row t0 of a [T][stride] head (`cols` valid, a multiple
// of 4; of 8 unless `narrow`) into a tile of 256-byte rows (cp.async; zeros past T and cols).
__device__ __forceinline__ void load_rows128(uint32_t dst, const bf16* src, int64_t t0, int64_t T,
                                             int64_t stride, int cols, bool narrow) {
#pragma unroll
  for (int it = 0; it < C * (KROW / 16) / THREADS; ++it) {
    const int i = threadIdx.x + it * THREADS, r = i >> 4, c = i & 15;
    if (narrow) {
      const int n = cols8_in(t0 + r < T, c, cols);
      cp_async_cols8(dst + tc::swizzle<KROW>(r, c), src + (n ? (t0 + r) * stride : 0), c, n, src);
      continue;
    }
    const bool in = t0 + r < T && c * 8 < cols;
    tc::cp_async16(dst + tc::swizzle<KROW>(r, c), in ? src + (t0 + r) * stride + c * 8 : src,
                   in ? 16 : 0);
  }
}

// Element (row, col) of head bh's K×V state in the ABI's [B·H][K][V] layout (h0, ht, dht,
// dh0), bh = blockIdx.y.
__device__ __forceinline__ int64_t abi_state_at(const args& a, int row, int col) {
  return (static_cast<int64_t>(blockIdx.y) * a.K + row) * a.V + col;
}

// A segment's state tile in the split's workspace (fp32, [KP][BV]).
__device__ __forceinline__ float* split_state(const args& a, int seg) {
  return a.dstate +
         ((static_cast<int64_t>(seg) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * KP * BV;
}
__device__ __forceinline__ float* split_gate(const args& a, int seg) {
  return a.dgate + (static_cast<int64_t>(seg) * gridDim.y + blockIdx.y) * KP;
}

// A block's K×BV tile of an ABI state ([B·H][K][V], bf16 or fp32 as a.state_fp32 says: h0,
// ht, dht, dh0) as the warp rows f hold it in registers; zero outside K and V, or when
// absent. One branch on the state's type around the tile.
__device__ __forceinline__ void load_abi_tile(const void* src, const args& a, state_rows f,
                                              int lane, float (&S)[8][4]) {
  const int c2 = (lane & 3) << 1;
  auto pair = [&](int row, int v) {
    if (a.state_fp32)
      return *reinterpret_cast<const float2*>(static_cast<const float*>(src) +
                                              abi_state_at(a, row, v));
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(
        static_cast<const bf16*>(src) + abi_state_at(a, row, v)));
  };
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const int v = blockIdx.x * BV + 8 * jn + c2;
    float2 s_lo = make_float2(0.f, 0.f), s_hi = s_lo;
    if (src && v < a.V) {
      if (f.lo < a.K) s_lo = pair(f.lo, v);
      if (f.hi < a.K) s_hi = pair(f.hi, v);
    }
    S[jn][0] = s_lo.x, S[jn][1] = s_lo.y, S[jn][2] = s_hi.x, S[jn][3] = s_hi.y;
  }
}
__device__ __forceinline__ void store_abi_tile(void* dst, const args& a, state_rows f, int lane,
                                               const float (&S)[8][4]) {
  if (!dst) return;
  const int c2 = (lane & 3) << 1;
  auto put = [&](int row, int v, float x, float y) {
    if (a.state_fp32)
      *reinterpret_cast<float2*>(static_cast<float*>(dst) + abi_state_at(a, row, v)) =
          make_float2(x, y);
    else
      *reinterpret_cast<uint32_t*>(static_cast<bf16*>(dst) + abi_state_at(a, row, v)) =
          tc::pack_bf16(x, y);
  };
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const int v = blockIdx.x * BV + 8 * jn + c2;
    if (v >= a.V) continue;
    if (f.lo < a.K) put(f.lo, v, S[jn][0], S[jn][1]);
    if (f.hi < a.K) put(f.hi, v, S[jn][2], S[jn][3]);
  }
}

}  // namespace glabench::chunked::walk
