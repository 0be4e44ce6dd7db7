// The backward's two state walks for bf16, on the chunk walk's machinery (bf16_mma/, as
// forward_bf16_mma.cuh):
//
//   chunk_walk_states_kernel   S_n, the state before every chunk (n = 0 … NT): stages 1–3
//                              of the forward without the outputs; it also lists the
//                              chunks the gradient walk leaves to WMMA;
//   chunk_walk_dstates_kernel  backwards over the chunks: dS_n, the gradient of the state
//                              after chunk n, and dh0, with dS ← 2^{G[C−1]} ⊙ dS +
//                              scale·q̃ᵀ·do; for the WMMA kernels also Y_n = Σ_v S_n ⊙ dS_n
//                              per V slab, which makes it follow the state walk.
//
// Long sequences with few heads take the forward's sequence split
// (bf16_mma/split_pieces.cuh): the state walk's segments start from h0 carried over
// chunk_walk_segment_states_kernel's pieces, the dS walk's from dht carried back over
// chunk_walk_segment_dstates_kernel's.
//
// They replace chunk_states_kernel (forward_wmma.cuh) and chunk_dstates_kernel
// (backward_wmma.cuh) for bf16 heads the walk takes, and fill the same workspace arrays,
// fp32 [B·H][NT+1][Kp][Vp], for the gradient walk (backward_bf16_mma_grads.cuh) and the
// WMMA kernels of the chunks it leaves. One block per (64-column V slab of Vp, head); the
// state lives in registers.
#pragma once

#include "bf16_mma/layout.cuh"
#include "bf16_mma/split_pieces.cuh"
#include "bf16_mma/stage1_decay_cumsum.cuh"
#include "bf16_mma/stage2_prepare_qg_kg.cuh"
#include "bf16_mma/stage3_state.cuh"

namespace glabench::chunked::walk {

// The backward's workspace arrays, as backward_wmma.cuh lays them out, and what the
// gradient walk leaves to the WMMA bodies (strong_features.hpp's grads_listing):
// listed[bh·NT + n], a chunk's grads_listing code, and list = [count, items], its count
// zeroed before the state walk. An item is (bh·NT + n)·(dv_items + k_items) + part: part <
// dv_items a dv slab of the chunk, else its dq/dk/dg K slab part − dv_items
// (chunk_listed_grads_kernel, backward_wmma.cuh).
struct state_arrays {
  float *states, *dstates, *ypart;
  int NT, Kp, Vp;
  int* list;
  unsigned char* listed;
  int dv_items, k_items;
};

// Row `row` of this block's slab in slot n of a [B·H][NT+1][Kp][Vp] array.
__device__ __forceinline__ float* slot_row(float* base, const state_arrays& w, int n, int row) {
  return base + ((static_cast<int64_t>(blockIdx.y) * (w.NT + 1) + n) * w.Kp + row) * w.Vp +
         blockIdx.x * BV;
}

__device__ __forceinline__ void store_slot(float* base, const state_arrays& w, int n,
                                           const float (&S)[8][4], state_rows f, int lane) {
  const int c2 = (lane & 3) << 1;
  float* lo = f.lo < w.Kp ? slot_row(base, w, n, f.lo) : nullptr;
  float* hi = f.hi < w.Kp ? slot_row(base, w, n, f.hi) : nullptr;
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    if (lo) *reinterpret_cast<float2*>(lo + 8 * jn + c2) = make_float2(S[jn][0], S[jn][1]);
    if (hi) *reinterpret_cast<float2*>(hi + 8 * jn + c2) = make_float2(S[jn][2], S[jn][3]);
  }
}

// Chunk `chunk`'s listing code into listed, and its items onto the list: every part of a
// whole chunk, else the K slabs whose dq, dk and dg the gradient walk leaves.
__device__ __forceinline__ void list_chunk(const state_arrays& w, int chunk, unsigned code) {
  const bool whole = code & grads_listing::kWholeChunk;
  unsigned parts = 0;  // bit i: item part i
  if (whole)
    parts = (1u << (w.dv_items + w.k_items)) - 1u;
  else
    for (int s = 0; s < w.k_items; ++s)
      if (code & (grads_listing::kSlab0 << s)) parts |= 1u << (w.dv_items + s);
  w.listed[chunk] = static_cast<unsigned char>(whole ? grads_listing::kWholeChunk : code);
  if (!parts) return;
  const int per_chunk = w.dv_items + w.k_items;
  int at = 1 + atomicAdd(w.list, __popc(parts));
  for (int part = 0; part < per_chunk; ++part)
    if (parts & (1u << part)) w.list[at++] = chunk * per_chunk + part;
}

// The state walk's record of a chunk's strong features (strong_slabs' mask), by chunk
// parity: unsigned [2][KP / 32] where the forward keeps q̄, which this walk does not write.
constexpr uint32_t kStrongMask = layout::qbar;
static_assert(KP / 32 == 4, "the mask's four words");

// Segment blockIdx.z of the sequence split (forward_bf16_mma.cuh), from h0 carried over the pieces
// of chunk_walk_segment_states_kernel before it.
template <bool kNarrow>
__global__ void __launch_bounds__(THREADS, 1) chunk_walk_states_kernel(args a, state_arrays w) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const walk_io io(a, sm, kNarrow);
  const state_rows f(warp, lane);
  const lane_offsets lo(warp, lane);
  const int seg = blockIdx.z, n0 = seg * a.seg_chunks, n1 = min(a.NT, n0 + a.seg_chunks);
  float S[8][4];
  load_abi_tile(a.h0, a, f, lane, S);
  for (int m = 0; m < seg * a.subs; ++m) carry_over_piece(a, m, f, lane, S);
  io.load_keyed(static_cast<int64_t>(n0) * C, walk_io::kK | walk_io::kG);
  io.load_values(0, static_cast<int64_t>(n0) * C);
  tc::cp_async_commit();
  if (tid == 0) at<int>(smem, layout::flag) = 0;
  if (tid < KP / 32) at<unsigned>(smem, kStrongMask + 4 * tid) = 0u;
  const int j = tid >> 6, p = tid & 63;
  for (int n = n0; n < n1; ++n) {
    const int cur = (n - n0) & 1;
    const int64_t t0 = static_cast<int64_t>(n) * C;
    tc::cp_async_wait_all();
    __syncthreads();
    if (n + 1 < n1) {
      io.load_values(cur ^ 1, t0 + C);
      tc::cp_async_commit();
    }
    store_slot(w.states, w, n, S, f, lane);
    if (tid == 0) at<int>(smem, layout::flag + 4 * (cur ^ 1)) = 0;
    if (tid < KP / 32) at<unsigned>(smem, kStrongMask + 16 * (cur ^ 1) + 4 * tid) = 0u;
    float l0[SUB], l1[SUB];
    walk_decay_cumsum(smem, j, p, l0, l1);
    const unsigned code = __reduce_or_sync(0xffffffffu, walk_grads_listing(l0, l1));
    if (lane == 0 && code) atomicOr(reinterpret_cast<int*>(smem + layout::flag + 4 * cur), code);
    const bool strong0 = strong_feature(l0[SUB - 1]), strong1 = strong_feature(l1[SUB - 1]);
    mark_strong_pair(reinterpret_cast<unsigned*>(smem + kStrongMask + 16 * cur), p, strong0,
                     strong1);
    __syncthreads();                    // the chunk's code and strong features
    if (blockIdx.x == 0 && tid == 0) {  // one V slab lists the chunk
      const unsigned* mask = reinterpret_cast<const unsigned*>(smem + kStrongMask + 16 * cur);
      const unsigned strong[KP / 32] = {mask[0], mask[1], mask[2], mask[3]};
      list_chunk(w, blockIdx.y * a.NT + n,
                 at<unsigned>(smem, layout::flag + 4 * cur) | strong_slabs(strong));
    }
    walk_prepare_kg(smem, j, p, l0, l1);
    __syncthreads();
    if (n + 1 < n1) {
      io.load_keyed(t0 + C, walk_io::kK | walk_io::kG);
      tc::cp_async_commit();
    }
    walk_state_update(smem, sm, sm + layout::v + cur * layout::tile_v, lo, S, f);
  }
  if (seg == a.segs - 1) store_slot(w.states, w, a.NT, S, f, lane);
}

// The split's first pass for the dS walk, backwards: piece blockIdx.z covers chunks
// [c0, c1) of the segments from a.dfirst_seg (walk_plan.hpp's dstate_piece), walked from c1 − 1
// down from a zero dS with stages 1, 2 (scale·q̃) and 3, leaving
//   dstate = Σ_n 2^{G[c0 … n−1 ends]}·scale·q̃_nᵀ·do_n     and dgate = the piece's gates
// so that dS before the piece is 2^{dgate}·dS after it + dstate.
template <bool kNarrow>
__global__ void __launch_bounds__(THREADS, 1)
    chunk_walk_segment_dstates_kernel(args a, const bf16* d_o) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const walk_io io(a, sm, kNarrow, d_o);
  const int piece = blockIdx.z;
  const chunk_span span = dstate_piece(piece, a.subs, a.sub_chunks, a.NT, a.dfirst_seg);
  const int c0 = span.first, c1 = span.last;
  const state_rows f(warp, lane);
  const lane_offsets lo(warp, lane);
  float dS[8][4] = {};
  float gate_lo = 0.f, gate_hi = 0.f;
  if (c1 > c0) {
    io.load_keyed(static_cast<int64_t>(c1 - 1) * C, walk_io::kQ | walk_io::kG);
    io.load_values(0, static_cast<int64_t>(c1 - 1) * C);
    tc::cp_async_commit();
  }
  const int j = tid >> 6, p = tid & 63;
  for (int n = c1 - 1; n >= c0; --n) {
    const int cur = (c1 - 1 - n) & 1;
    const int64_t t0 = static_cast<int64_t>(n) * C;
    tc::cp_async_wait_all();
    __syncthreads();
    if (n > c0) {
      io.load_values(cur ^ 1, t0 - C);
      tc::cp_async_commit();
    }
    float l0[SUB], l1[SUB];
    walk_decay_cumsum(smem, j, p, l0, l1);
    __syncthreads();
    walk_prepare_qg(smem, j, p, l0, l1, a.scale);
    __syncthreads();
    if (n > c0) {
      io.load_keyed(t0 - C, walk_io::kQ | walk_io::kG);
      tc::cp_async_commit();
    }
    walk_state_update(smem, sm, sm + layout::v + cur * layout::tile_v, lo, dS, f);
    gate_lo += chunk_gate_sum(smem, f.lo);
    gate_hi += chunk_gate_sum(smem, f.hi);
  }
  store_piece(a, piece, f, lane, dS, gate_lo, gate_hi);
}

// kY: and Y_n per V slab into w.ypart, from S_n (for the WMMA kernels; the gradient walk sums
// its own, so that this walk need not follow the state walk).
template <bool kNarrow, bool kY>
__global__ void __launch_bounds__(THREADS, 1)
    chunk_walk_dstates_kernel(args a, state_arrays w, const bf16* d_o, const void* dht, void* dh0) {
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sm = tc::smem_addr(smem);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const walk_io io(a, sm, kNarrow, d_o);
  const state_rows f(warp, lane);
  const lane_offsets lo(warp, lane);
  const int c2 = (lane & 3) << 1;
  // Segment blockIdx.z, from dht carried back over the pieces after it, last first.
  const int seg = blockIdx.z, n0 = seg * a.seg_chunks, n1 = min(a.NT, n0 + a.seg_chunks);
  float dS[8][4];
  load_abi_tile(dht, a, f, lane, dS);
  for (int m = (a.segs - a.dfirst_seg) * a.subs - 1; m >= (seg + 1 - a.dfirst_seg) * a.subs; --m)
    carry_over_piece(a, m, f, lane, dS);
  const int64_t last = static_cast<int64_t>(n1 - 1) * C;
  io.load_keyed(last, walk_io::kQ | walk_io::kG);
  io.load_values(0, last);
  tc::cp_async_commit();
  const int j = tid >> 6, p = tid & 63;
  for (int n = n1 - 1; n >= n0; --n) {
    const int cur = (n1 - 1 - n) & 1;
    const int64_t t0 = static_cast<int64_t>(n) * C;
    tc::cp_async_wait_all();
    __syncthreads();
    if (n > n0) {
      io.load_values(cur ^ 1, t0 - C);
      tc::cp_async_commit();
    }
    // dS_n and this slab's Y_n = Σ_v S_n ⊙ dS_n (the four lanes of a row sum their pairs).
    store_slot(w.dstates, w, n, dS, f, lane);
    if constexpr (kY) {
      float y_lo = 0.f, y_hi = 0.f;
      if (f.lo < w.Kp) {
        const float* s = slot_row(w.states, w, n, f.lo) + c2;
#pragma unroll
        for (int jn = 0; jn < 8; ++jn) {
          const float2 x = *reinterpret_cast<const float2*>(s + 8 * jn);
          y_lo = fmaf(x.x, dS[jn][0], y_lo), y_lo = fmaf(x.y, dS[jn][1], y_lo);
        }
      }
      if (f.hi < w.Kp) {
        const float* s = slot_row(w.states, w, n, f.hi) + c2;
#pragma unroll
        for (int jn = 0; jn < 8; ++jn) {
          const float2 x = *reinterpret_cast<const float2*>(s + 8 * jn);
          y_hi = fmaf(x.x, dS[jn][2], y_hi), y_hi = fmaf(x.y, dS[jn][3], y_hi);
        }
      }
#pragma unroll
      for (int m = 1; m <= 2; m <<= 1) {
        y_lo += __shfl_xor_sync(0xffffffffu, y_lo, m);
        y_hi += __shfl_xor_sync(0xffffffffu, y_hi, m);
      }
      if ((lane & 3) == 0) {
        float* y = w.ypart +
                   ((static_cast<int64_t>(blockIdx.y) * w.NT + n) * gridDim.x + blockIdx.x) * w.Kp;
        if (f.lo < w.Kp) y[f.lo] = y_lo;
        if (f.hi < w.Kp) y[f.hi] = y_hi;
      }
    }
    float l0[SUB], l1[SUB];
    walk_decay_cumsum(smem, j, p, l0, l1);
    __syncthreads();
    walk_prepare_qg(smem, j, p, l0, l1, a.scale);
    __syncthreads();
    if (n > n0) {
      io.load_keyed(t0 - C, walk_io::kQ | walk_io::kG);
      tc::cp_async_commit();
    }
    walk_state_update(smem, sm, sm + layout::v + cur * layout::tile_v, lo, dS, f);
  }
  if (seg == 0) store_abi_tile(dh0, a, f, lane, dS);
}

}  // namespace glabench::chunked::walk
