// The fp64 forward in one pass: the chunk walk of forward_bf16_mma.cuh on the FP64 tensor
// cores (DMMA, m16n8k4). fp32 ran it (3×TF32, fp32_fp64_mma/mma.cuh) until the pipelined
// walk (forward_fp32_3xtf32.cuh) replaced it; since a mild chunk's scores take four feature
// quarters of one m16 row block (C = 16), it is fp64's alone. The stages keep their fp32
// forms where the pipelined walk shares them.
// One block per (V slab of 64 columns, head) walks the chunks in order and keeps its
// 128×64 state in registers; every stage of a chunk runs inside the walk:
//
//   stage 1  fp_decay_cumsum    G, the cumulative log2 gates
//   stage 2  fp_prepare_qg_kg   q̃, k̂ (and k̃): the operands with their decays, in place
//   stage 3  fp_state_update    S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v
//   stage 4  fp_inner_chunk_by_quarters  the masked scores A (mild chunks; else _by_pairs)
//   stage 5  fp_combine         o = scale·(q̃·S + A·v)
//
// each in fp32_fp64_mma/stageN_*.cuh, shared with the fp32 walk, on the tiles of
// fp32_fp64_mma/layout.cuh.
//
// A chunk is 16 tokens, so that every input tile is double-buffered: the next chunk's q,
// k, g and v load (cp.async) during this one.
//
// Gates: every exponent is ≤ 0 — G[t] for q̃, G[C−1] − G[t] for k̂ — except k̃'s −G[t],
// which only a mild chunk takes (G ≥ −kMildLog2 throughout: 2^{480}). Any other chunk sums
// its scores pair by pair from the pair's own gates (fp_inner_chunk_by_pairs), so a gate of
// −30, chunk sums of −10⁴ and exact zeros all stay accurate and finite.
#pragma once

#include "fp32_fp64_mma/split_pieces.cuh"
#include "fp32_fp64_mma/stage1_decay_cumsum.cuh"
#include "fp32_fp64_mma/stage2_prepare_qg_kg.cuh"
#include "fp32_fp64_mma/stage3_state.cuh"
#include "fp32_fp64_mma/stage4_inner_chunk.cuh"
#include "fp32_fp64_mma/stage5_combine.cuh"
#include "walk_plan.hpp"

namespace glabench::chunked::walk_fp {

// o's element pairs of a warp's OT column tiles (stage 5's layout), scaled, past T and V
// left out.
template <class T, bool kRev>
__device__ __forceinline__ void fp_store_outputs(const walk_io<T, sizes<T>, layout<T>, kRev>& io,
                                                 int64_t t0, int warp, int lane, T scale,
                                                 const T (&O)[sizes<T>::OT][mma_policy<T>::NACC]) {
  using Z = sizes<T>;
  using P = mma_policy<T>;
  using T2 = std::conditional_t<sizeof(T) == 4, float2, double2>;
  const int r0 = (warp / Z::OUT_WARPS) * P::TM, n0 = Z::OT * (warp % Z::OUT_WARPS) * P::TN;
#pragma unroll
  for (int j = 0; j < Z::OT; ++j)
#pragma unroll
    for (int e = 0; e < P::NACC; e += 2) {
      const int64_t t = t0 + r0 + acc_row(lane, e);
      const int col = n0 + j * P::TN + acc_col(lane, e);
      if (io.has_source(t) && io.v0 + col < io.V)
        *reinterpret_cast<T2*>(io.out(t) + col) = T2{scale * O[j][e], scale * O[j][e + 1]};
    }
}

// kSlots: the backward's state passes (args::slots); kRev: its dS walk, on the tokens
// backwards (args::rev).
template <class T, bool kSlots, bool kRev = false>
__global__ void __launch_bounds__(sizes<T>::THREADS, 1) chunk_walk_fp_kernel(args<T> a) {
  using Z = sizes<T>;
  using L = layout<T>;
  using P = mma_policy<T>;
  extern __shared__ __align__(128) unsigned char raw[];
  T* smem = reinterpret_cast<T*>(raw);
  T* E = smem + L::E;
  double* tots = reinterpret_cast<double*>(raw + L::tots_bytes);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int f = tid % Z::KP, h = tid / Z::KP;  // stages 1–2: feature, half of the chunk
  const walk_io<T, sizes<T>, layout<T>, kRev> io(a, smem);

  const int seg = blockIdx.z, n0 = seg * a.seg_chunks, n1 = min(a.NT, n0 + a.seg_chunks);

  // The state before chunk n0: h0, carried over the pieces before the segment.
  state_regs<T> S;
  fp_load_state(a.h0, a, S, warp, lane);
  for (int m = 0; m < seg * a.subs; ++m) fp_carry_over_piece(a, m, S, warp, lane);
  const bool outputs = !kSlots || a.o;  // o null: a state pass (args::slots)
  // A state pass reads no queries.
  auto load = [&](int b, int64_t t) {
    if (outputs)
      io.load(b, t);
    else
      io.template load<Z::THREADS, false>(b, t, tid);
  };
  load(0, static_cast<int64_t>(n0) * Z::C);
  for (int n = n0; n < n1; ++n) {
    const int cur = (n - n0) & 1;
    T* buf = smem + cur * L::buf;
    const int64_t t0 = static_cast<int64_t>(n) * Z::C;
    tc::cp_async_wait_all();
    __syncthreads();  // chunk n has landed; chunk n−1 is done with every buffer
    if (n + 1 < n1) load(cur ^ 1, t0 + Z::C);
    io.template scale_v<Z::THREADS>(buf, tid);  // read after stage 1's barrier
    if (kSlots && t0 % 64 == 0) fp_store_slot<T>(a.slots, static_cast<int>(t0 / 64), S, warp, lane);
    if (outputs) fp_state_to_shared(smem + L::St, S, warp, lane);

    double l[Z::C / 2];
    // Mild: each half's gates sum to ≥ −kMildLog2/2 in every feature (tots written).
    const bool mild = __syncthreads_and(fp_decay_cumsum(buf, tots, f, h, l) >= -Z::kMildLog2 / 2);
    if (outputs && !mild) fp_inner_chunk_by_pairs(buf, smem + L::pairs, smem + L::A, warp, lane);
    if (outputs)
      fp_prepare_qg_kg(buf, E, tots, f, h, l, mild);
    else  // a state pass: k̂ and E alone
      fp_prepare_kg(buf, E, tots, f, h, l);
    __syncthreads();  // operands written
    if (outputs && mild)
      fp_inner_chunk_by_quarters<T, Z, L>(buf, nullptr, nullptr, smem + L::pairs, warp, lane);
    // The state update reads only k̂, v and E: each warp runs it after its share of the
    // scores (S_n is already in its tile for stage 5).
    fp_state_update(buf, E, S, warp, lane);
    __syncthreads();  // scores written
    if (!outputs) continue;

    T O[Z::OT][P::NACC];
    fp_combine(buf, smem + L::St, smem + L::A, mild ? smem + L::pairs : nullptr, warp, lane, O);
    fp_store_outputs(io, t0, warp, lane, a.scale, O);
  }
  if (seg == a.segs - 1) fp_store_state(a.ht, a, S, warp, lane);
}

// For long sequences with few heads: the first pass of the sequence split, as in the bf16
// walk (forward_bf16_mma.cuh, chunk_walk_segment_states_kernel). Each piece of every segment
// but the last walks from a zero state with stages 1–3 only, leaving
//   dstate = Σ_n 2^{G[end] − G[chunk n end]}·k̂_nᵀ·v_n     and dgate = G[end] − G[start]
// and each segment's walk starts from h0 carried across the pieces before it.
template <class T, bool kRev = false>
__global__ void __launch_bounds__(sizes<T>::THREADS, 1)
    chunk_walk_fp_segment_states_kernel(args<T> a) {
  using Z = sizes<T>;
  using L = layout<T>;
  extern __shared__ __align__(128) unsigned char raw[];
  T* smem = reinterpret_cast<T*>(raw);
  T* E = smem + L::E;
  double* tots = reinterpret_cast<double*>(raw + L::tots_bytes);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int f = tid % Z::KP, h = tid / Z::KP;
  const walk_io<T, sizes<T>, layout<T>, kRev> io(a, smem);
  const int piece = blockIdx.z;
  const walk::chunk_span span = walk::state_piece(piece, a.sub_chunks, a.NT);
  state_regs<T> S = {};
  double gate = 0.0;  // the piece's summed gates of feature f, in chunk order
  io.template load<Z::THREADS, false>(0, static_cast<int64_t>(span.first) * Z::C, tid);
  for (int n = span.first; n < span.last; ++n) {
    const int cur = (n - span.first) & 1;
    T* buf = smem + cur * L::buf;
    tc::cp_async_wait_all();
    __syncthreads();
    if (n + 1 < span.last)
      io.template load<Z::THREADS, false>(cur ^ 1, static_cast<int64_t>(n + 1) * Z::C, tid);
    io.template scale_v<Z::THREADS>(buf, tid);
    double l[Z::C / 2];
    fp_decay_cumsum(buf, tots, f, h, l);
    __syncthreads();  // tots written
    gate += chunk_gates<Z::KP>(tots, f, h).last;
    fp_prepare_kg(buf, E, tots, f, h, l);
    __syncthreads();
    fp_state_update(buf, E, S, warp, lane);
  }
  fp_store_piece(a, piece, S, warp, lane);
  if (blockIdx.x == 0 && h == 1) split_gate(a, piece)[f] = gate;
}

}  // namespace glabench::chunked::walk_fp
