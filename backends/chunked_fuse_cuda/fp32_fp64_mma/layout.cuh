// The fp32 and fp64 chunk walks' common ground: their sizes, the kernel arguments and the
// cp.async loads of a chunk's tiles (each walk's buffer layout: fp32_pipeline.cuh,
// fp64_pipeline.cuh).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "../ptx_primitives.cuh"
#include "../reversed_tokens.hpp"
#include "../tensor_layout.cuh"
#include "mma.cuh"

namespace glabench::chunked::walk_fp {

// The sequence split's chunk (walk_plan.hpp: fp32 32 tokens, fp64 16, each walk's own
// chunk), the padded key width (K ≤ KP), the V slab of a block (the state tile of the split's
// workspace and of the backward's slots).
template <class T>
struct sizes {
  static constexpr int C = sizeof(T) == 4 ? 32 : 16, KP = 128, BV = 64;
  // A mild chunk's score partials (fp_inner_chunk_by_quarters, fp64: four C×C, one a
  // feature quarter): rows of PS elements, C + 4 so that a fragment's eight rows lie on
  // different banks.
  static constexpr int PS = C + 4;
  // A chunk whose two halves' log2 gates each sum to ≥ −kMildLog2/2 in every feature is
  // mild: one reference for the whole chunk, 2^{±G} ≤ 2^{kMildLog2}, inside T's range. In
  // fp32, 2^{96}·|k| leaves 2^{31} below the largest float for a chunk's sums, and q·2^{−96}
  // keeps its 3×TF32 lo part normal for |q| ≥ 2^{−18}.
  static constexpr double kMildLog2 = sizeof(T) == 4 ? 96.0 : 480.0;
};
inline constexpr double kLog2e = 1.4426950408889634;

// The backward's state passes (../backward_fp_walks.cuh): where not null, the state
// before every 64-token chunk m (the WMMA kernels' chunks, `chunks` of them) goes to slot
// m of states [B·H][chunks + 1][Kp][Vp] (rows ≥ Kp, columns ≥ Vp left out), or to slot
// chunks − 1 − m where `reversed` (the dS walk's, set with `rev` by the launch).
template <class T>
struct state_slots {
  T* states;
  int chunks, Kp, Vp;
  bool reversed;
};
// The backward's dS walk (../backward_fp_walks.cuh), the kernels' kRev: the walk's T_len
// tokens are the tensors' `tokens` backwards, padded at the front (../reversed_tokens.hpp),
// each read from its source token — q, k and v from there, g from the token after — and
// v scaled by v_scale as it lands (fp16: k instead, walk_io); o goes to the source tokens.
template <class T>
struct reversal {
  int64_t tokens;
  T v_scale;
};

// A walk's arguments: the tokens' tensors (q, k, v, g, o) in storage type In — T, or fp16
// that fp32's pipelined walk widens as it lands (walk_io) and rounds as it stores — and
// the states (h0, ht) in T.
template <class T, class In = T>
struct args {
  const In *q, *k, *v, *g;
  const T* h0;
  In* o;
  T* ht;
  int H, K, V, NT;
  int64_t T_len;
  T scale;
  // The sequence split, as in the bf16 walk (../walk_plan.hpp): `segs` segments of
  // `seg_chunks` chunks, one block each (grid z); each but the last cut into `subs` pieces
  // of `sub_chunks` chunks, whose state contributions the first pass (each walk's
  // `…_states_kernel`) leaves in dstate [piece][B·H][V slabs][KP][BV] and summed log2 gates in
  // dgate [piece][B·H][KP]. One segment: no split, both unused.
  int segs, seg_chunks, subs, sub_chunks;
  T* dstate;
  double* dgate;
  state_slots<T> slots;
  reversal<T> rev;
};
// Whether a pass has outputs (and the scores only they need): the walk and the dS walk
// (o′ = dv); not the split's first pass (kStates), nor the backward's state pass, the only
// pass with slots going forwards (launch_fp_backward_walks: o null).
template <bool kStates, bool kSlots, bool kRev>
inline constexpr bool pass_outputs = !kStates && (kRev || !kSlots);

// Where the walk's token t lies in the tensors, which hold T_src tokens a sequence: the
// forward's t itself (below T_len); the dS walk's (kRev) its source token backwards, none
// in the front padding (../reversed_tokens.hpp). out_row: the same row unchecked (where
// has_source), whose rows step backwards under kRev.
template <bool kRev>
__device__ __forceinline__ int64_t walk_source(int64_t t, int64_t T_len, int64_t T_src) {
  if constexpr (kRev) return reversed::source_token(t, T_len, T_src);
  return t < T_len ? t : -1;
}
template <bool kRev>
__device__ __forceinline__ bool walk_has_source(int64_t t, int64_t T_len, int64_t T_src) {
  return kRev ? walk_source<kRev>(t, T_len, T_src) >= 0 : t < T_len;
}
template <bool kRev>
__device__ __forceinline__ int64_t walk_out_row(int64_t t, int64_t T_len) {
  return kRev ? T_len - 1 - t : t;
}

// An output element in its storage type: T's own, or fp16 rounded to nearest.
template <class In, class T>
__device__ __forceinline__ In storage_of(T x) {
  if constexpr (std::is_same_v<In, __half>)
    return __float2half_rn(x);
  else
    return x;
}

// A consumer warp's outputs: o's slab of the block (the dS walk's o′ = dv, at the source
// tokens backwards) in storage In, none where the pass has no outputs (kOutputs,
// pass_outputs).
template <bool kOutputs, bool kRev, class T, class In>
struct walk_out {
  const args<T, In>& a;
  int64_t T_src, vs;
  int v0;
  In* o;
  __device__ walk_out(const args<T, In>& a_, int BV)
      : a(a_),
        T_src(kRev ? a_.rev.tokens : a_.T_len),
        vs(static_cast<int64_t>(a_.H) * a_.V),
        v0(blockIdx.x * BV) {
    o = kOutputs ? a.o + head_row(blockIdx.y, a.H, T_src) * a.V + v0 : nullptr;
  }
  __device__ bool has_source(int64_t t) const { return walk_has_source<kRev>(t, a.T_len, T_src); }
  // The consumer's oᵀ accumulators of the chunk at walk token t_chunk (8·NT tokens), V
  // rows 16·rb … of the slab, scaled: O[nt][e] at token t_chunk + 8·nt + 2c + e%2, V row
  // 16·rb + g + 8·(e/2) (g, c: the lane's fragment row and column). The bounds are
  // checked only in a ragged chunk or slab.
  template <int NT>
  __device__ void store(int64_t t_chunk, int rb, int lane, const T (&O)[NT][4]) const {
    const int64_t t0 = t_chunk + 2 * (lane & 3);
    const int vr = 16 * rb + (lane >> 2);
    In* out = o + walk_out_row<kRev>(t0, a.T_len) * vs + vr;
    const int64_t step = kRev ? -vs : vs;
    const bool whole =
        (kRev ? has_source(t_chunk) : t_chunk + 8 * NT <= a.T_len) && v0 + 16 * rb + 16 <= a.V;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int dt = 8 * nt + (e & 1), dv = 8 * (e >> 1);
        if (whole || (has_source(t0 + dt) && v0 + vr + dv < a.V))
          out[dt * step + dv] = storage_of<In>(a.scale * O[nt][e]);
      }
  }
};

// One head's q, k, g and v (from column v0 of the block's slab) in the [B,T,H,D] layout,
// and the cp.async loads of a chunk's tiles into buffer `b` of layout L; zeros past T, K
// and V. NTH threads (a walk's producers) share a load, `tid` among them. kRev: the dS
// walk's tokens, backwards (args::rev).
// fp16 storage (In = __half, fp32's pipelined walk): a tile's halves land unswizzled in the
// first half of its own float tile, and `widen` — by the same threads, once the copies
// have landed — turns them into the swizzled floats the stages read. The dS walk's scale
// goes onto its keys there, k′ = scale·q, not onto v′ = do: the same dS (dht enters
// unscaled as h0′), and v′ stays exact in TF32 (mma.cuh's exact_in_tf32).
template <class T, class Z, class L, bool kRev = false, class In = T>
struct walk_io {
  static constexpr bool kHalf = !std::is_same_v<In, T>;
  static_assert(!kHalf || (std::is_same_v<T, float> && sizeof(In) == 2), "fp16 into fp32 tiles");
  static constexpr int kVec = 16 / sizeof(In);
  const In *q, *k, *g, *v;
  int64_t ks, vs, T_len, T_src;
  int K, V, v0;
  T v_scale;
  uint32_t sm;
  __device__ walk_io(const args<T, In>& a, const T* smem)
      : ks(static_cast<int64_t>(a.H) * a.K),
        vs(static_cast<int64_t>(a.H) * a.V),
        T_len(a.T_len),
        T_src(kRev ? a.rev.tokens : a.T_len),
        K(a.K),
        V(a.V),
        v0(blockIdx.x * Z::BV),
        v_scale(a.rev.v_scale),
        sm(tc::smem_addr(smem)) {
    const int bh = blockIdx.y;
    const int64_t head = head_row(bh, a.H, T_src);
    q = a.q + head * a.K, k = a.k + head * a.K, g = a.g + head * a.K;
    v = a.v + head * a.V + v0;
  }
  // The tensors' token of walk token t, and the token of its gate; −1 for none (zeros).
  __device__ int64_t source(int64_t t) const { return walk_source<kRev>(t, T_len, T_src); }
  __device__ int64_t gate_source(int64_t t) const {
    if constexpr (kRev) return reversed::gate_token(t, T_len, T_src);
    return source(t);
  }
  // The dS walk's v′ = v_scale·v, in place in buffer b once its chunk has landed; NTH
  // threads, `tid` among them (fp16: `widen` scales k′ instead).
  template <int NTH>
  __device__ void scale_v(T* buf, int tid) const {
    if constexpr (kRev && !kHalf) {
      static_assert(Z::C * Z::BV % NTH == 0, "whole rounds");
#pragma unroll
      for (int i = tid; i < Z::C * Z::BV; i += NTH) buf[L::v + i] *= v_scale;
    }
  }
  // Where a 16-byte vector of tile row r, column c lands: the swizzled tile's own, or fp16's
  // unswizzled staging, in bytes from the tile's start.
  template <int COLS>
  static __device__ int landing(int r, int c) {
    if constexpr (kHalf) return (r * COLS + c) * static_cast<int>(sizeof(In));
    return swz<T, COLS>(r, c) * static_cast<int>(sizeof(T));
  }
  // f(it, r, c) for the 16-byte vectors of a chunk's COLS-column tile that thread `tid` of
  // NTH takes: vector tid + it·NTH, at row r, column c (the load's and widen's one order).
  template <int NTH, int COLS, class F>
  static __device__ void each_vector(int tid, F f) {
    constexpr int per_row = COLS / kVec, total = Z::C * per_row;
    static_assert(kHalf || total % NTH == 0, "whole rounds of loads");
#pragma unroll
    for (int it = 0; it < (total + NTH - 1) / NTH; ++it) {
      const int i = tid + it * NTH;
      if (total % NTH != 0 && i >= total) break;
      f(it, i / per_row, (i % per_row) * kVec);
    }
  }
  // kWithQ = false: q is left out (a pass that needs the keys alone).
  template <int NTH, bool kWithQ = true>
  __device__ void load(int b, int64_t t0, int tid) const {
    const uint32_t base = sm + b * L::buf * static_cast<uint32_t>(sizeof(T));
    each_vector<NTH, Z::KP>(tid, [&](int, int r, int c) {
      bool in, gin;
      int64_t src, gsrc;
      if constexpr (kRev) {
        const int64_t s = source(t0 + r), sg = gate_source(t0 + r);
        in = s >= 0 && c < K, gin = sg >= 0 && c < K;
        src = in ? s * ks + c : 0, gsrc = gin ? sg * ks + c : 0;
      } else {
        in = gin = t0 + r < T_len && c < K;
        src = gsrc = in ? (t0 + r) * ks + c : 0;
      }
      const uint32_t dst = base + landing<Z::KP>(r, c);
      if (kWithQ) tc::cp_async16(dst + L::q * sizeof(T), q + src, in ? 16 : 0);
      tc::cp_async16(dst + L::k * sizeof(T), k + src, in ? 16 : 0);
      tc::cp_async16(dst + L::g * sizeof(T), g + gsrc, gin ? 16 : 0);
    });
    each_vector<NTH, Z::BV>(tid, [&](int, int r, int c) {
      const int64_t s = kRev ? source(t0 + r) : t0 + r;
      const bool in = (kRev ? s >= 0 : s < T_len) && v0 + c < V;
      tc::cp_async16(base + L::v * sizeof(T) + landing<Z::BV>(r, c), in ? v + s * vs + c : v,
                     in ? 16 : 0);
    });
    tc::cp_async_commit();
  }
  // fp16: buffer b's halves, landed by this thread's own `load` (the same NTH, tid and
  // kWithQ), into its swizzled float tiles; `sync` the NTH threads' barrier, between every
  // thread's reads and the writes over them. In T's own storage, the barrier alone.
  template <int NTH, bool kWithQ = true, class Sync>
  __device__ void widen(T* buf, int tid, Sync sync) const {
    if constexpr (kHalf) {
      uint4 x[(Z::C * Z::KP / kVec + NTH - 1) / NTH][3], y[(Z::C * Z::BV / kVec + NTH - 1) / NTH];
      auto staged = [&](int tile, int at) {
        return *reinterpret_cast<const uint4*>(reinterpret_cast<const unsigned char*>(buf + tile) +
                                               at);
      };
      each_vector<NTH, Z::KP>(tid, [&](int it, int r, int c) {
        if (kWithQ) x[it][0] = staged(L::q, landing<Z::KP>(r, c));
        x[it][1] = staged(L::k, landing<Z::KP>(r, c));
        x[it][2] = staged(L::g, landing<Z::KP>(r, c));
      });
      each_vector<NTH, Z::BV>(
          tid, [&](int it, int r, int c) { y[it] = staged(L::v, landing<Z::BV>(r, c)); });
      sync();
      // 8 halves, times `mul`, into the swizzled 4-float groups at (r, c) and (r, c + 4).
      auto put = [&](auto cols, int tile, int r, int c, const uint4& h, float mul) {
        constexpr int COLS = decltype(cols)::value;
        tc::widen_halves(h, mul, buf + tile + swz<T, COLS>(r, c),
                         buf + tile + swz<T, COLS>(r, c + 4));
      };
      using k_cols = std::integral_constant<int, Z::KP>;
      using v_cols = std::integral_constant<int, Z::BV>;
      each_vector<NTH, Z::KP>(tid, [&](int it, int r, int c) {
        if (kWithQ) put(k_cols{}, L::q, r, c, x[it][0], 1.f);
        put(k_cols{}, L::k, r, c, x[it][1], kRev ? v_scale : 1.f);
        put(k_cols{}, L::g, r, c, x[it][2], 1.f);
      });
      each_vector<NTH, Z::BV>(tid,
                              [&](int it, int r, int c) { put(v_cols{}, L::v, r, c, y[it], 1.f); });
    } else {
      sync();
    }
  }
};

}  // namespace glabench::chunked::walk_fp
