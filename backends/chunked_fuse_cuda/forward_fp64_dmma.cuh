// The fp64 forward as a pipelined chunk walk on DMMA (mma.sync m16n8k4): two kinds of
// warps of one block share the stages (fp32_fp64_mma/stageN_*.cuh), as fp32's pipelined
// walk (forward_fp32_3xtf32.cuh) shares them, so that the work that does not need the
// state overlaps the work that does.
//
//   producers (8 warps)  stage 1  fp_decay_cumsum             G, whether the chunk is mild
//                        stage 4  fp_pair_partials            scores of a chunk not mild
//                        stage 2  fp_prepare_operands         q̃, k̃ (mild), k̂, E
//                        stage 4  fp_inner_chunk_by_quarters  scores of a mild chunk
//   consumers (8 warps)  stage 5  oᵀ = scale·(Sᵀ·q̃ᵀ + vᵀ·Aᵀ)
//                        stage 3  Sᵀ ← Sᵀ·diag(2^{G[C−1]}) + vᵀ·k̂
//
// The consumers keep Sᵀ in registers (state_t64): warp cw holds V rows 16·(cw%4) … and
// features 64·(cw/4) …, so that its accumulator tiles are the A operand of oᵀ = Sᵀ·q̃ᵀ
// directly. Each of a row block's two warps sums its features' half of oᵀ; the second adds
// the scores' vᵀ·Aᵀ and hands its half over in shared memory (`exch`, by chunk parity), the
// first adds it and stores o. Chunks are 16 tokens (fp64_pipeline.cuh), in
// a ring of three buffers.
//
// Gates: every exponent is ≤ 0 — G[t] for q̃, G[C−1] − G[t] for k̂ — except k̃'s −G[t],
// which only a mild chunk takes (each half's gates ≥ −kMildLog2/2: 2^{480}). Any other
// chunk sums its scores pair by pair from the pair's own gates (fp_pair_partials), so a
// gate of −30, chunk sums of −10⁴ and exact zeros all stay accurate and finite.
//
// The sequence split (walk_plan.hpp, over the same 16-token chunks): its first pass is the
// same pipeline with the state's stages only (kStates): producers stages 1–2 (k̂ and E),
// consumers the update from a zero state, leaving each piece's state and summed gates.
// The backward's state pass (kSlots, not kRev: no outputs, pass_outputs) loads no queries
// and computes no scores, and its dS walk (kRev) reads the tokens backwards (args::rev,
// backward_fp_walks.cuh).
#pragma once

#include "fp32_fp64_mma/fp64_pipeline.cuh"
#include "fp32_fp64_mma/split_pieces.cuh"
#include "fp32_fp64_mma/stage1_decay_cumsum.cuh"
#include "fp32_fp64_mma/stage2_prepare_qg_kg.cuh"
#include "fp32_fp64_mma/stage3_state.cuh"
#include "fp32_fp64_mma/stage4_inner_chunk.cuh"
#include "fp32_fp64_mma/stage5_combine.cuh"
#include "walk_plan.hpp"

namespace glabench::chunked::walk_fp {

// Stage 2's operands in place: the walk's (kOutputs) q̃ over q, k̃ over k, k̂ over g; a state
// pass's k̂ alone.
template <bool kOutputs>
struct pipe64_operands {
  double* buf;
  using L = pipe64_layout;
  __device__ void mild(int at, double qt, double kt, double e) const {
    if (kOutputs) buf[L::q + at] = qt, buf[L::k + at] = kt;
    buf[L::g + at] = kt * e;
  }
  __device__ void strong(int at, double qt, double kh) const {
    if (kOutputs) buf[L::q + at] = qt;
    buf[L::g + at] = kh;
  }
};

// The producers of tokens [t_first, t_first + 16·count). `full` and `empty`: the buffers'
// mbarriers. The first pass (kStates) leaves the span's summed gates in the split's
// workspace (piece blockIdx.z; slab 0's block, a thread a feature).
template <bool kStates, bool kSlots, bool kRev>
__device__ __forceinline__ void fp64_produce(const args<double>& a, double* smem, uint64_t* full,
                                             uint64_t* empty, int64_t t_first, int count) {
  using Z = pipe64_sizes;
  using L = pipe64_layout;
  const int pt = threadIdx.x - 32 * Z::CONSUMERS, pw = pt >> 5, lane = pt & 31;
  const int f = pt % Z::KP, h = pt / Z::KP;
  double* tots = reinterpret_cast<double*>(reinterpret_cast<unsigned char*>(smem) + L::tots_bytes);
  const walk_io<double, Z, L, kRev> io(a, smem);
  auto psync = [] { bar::sync(bar::kProducers, Z::PTHREADS); };
  // The state pass and the first pass (kStates) load no queries.
  constexpr bool outputs = pass_outputs<kStates, kSlots, kRev>;
  double gate = 0.0;  // kStates: the span's summed gates of feature f, in chunk order
  auto load = [&](int b, int64_t t) { io.template load<Z::PTHREADS, outputs>(b, t, pt); };
  load(0, t_first);
  for (int i = 0; i < count; ++i) {
    // The next chunk, into the buffer of the chunk NBUF − 1 behind once the consumers are
    // done with it (a group for every chunk, empty past the end).
    if (i + 1 < count) {
      const int nb = (i + 1) % Z::NBUF;
      if (i + 1 >= Z::NBUF) bar::wait(empty + nb, ((i + 1 - Z::NBUF) / Z::NBUF) & 1);
      load(nb, t_first + static_cast<int64_t>(i + 1) * Z::C);
    } else {
      tc::cp_async_commit();
    }
    cp_async_wait<1>();
    const int b = i % Z::NBUF;
    double* buf = smem + b * L::buf;
    psync();  // chunk i has landed for every producer; chunk i−1's tots are read
    io.template scale_v<Z::PTHREADS>(buf, pt);  // the consumers' alone, after `full`
    double l[Z::C / 2];
    const bool mild =
        bar::sync_and(bar::kProducers, Z::PTHREADS,
                      fp_decay_cumsum<double, Z, L>(buf, tots, f, h, l) >= -Z::kMildLog2 / 2);
    if constexpr (kStates) gate += chunk_gates<Z::KP>(tots, f, h).last;
    if constexpr (outputs) {
      if (!mild) {
        fp_pair_partials<double, Z, L, Z::PS>(buf, buf + L::part, pw, lane);
        psync();  // the raw tiles read, before stage 2 writes over them
      }
      fp_prepare_operands<double, Z, L>(buf, buf + L::E, tots, f, h, l, mild,
                                        pipe64_operands<true>{buf});
      if (mild) {
        psync();  // operands written
        fp_inner_chunk_by_quarters<double, Z, L>(buf, nullptr, nullptr, buf + L::part, pw, lane);
      }
    } else {  // k̂ = k·2^{G[C−1]−G} alone, one exponential an element
      fp_prepare_operands<double, Z, L>(buf, buf + L::E, tots, f, h, l, false,
                                        pipe64_operands<false>{buf});
    }
    bar::arrive(full + b);
  }
  if (kStates && h == 1 && blockIdx.x == 0) split_gate(a, blockIdx.z)[f] = gate;
}

// The consumers of the same span: the walk (o, and ht after the last segment), the
// backward's passes (kSlots: the slots, and the dS walk's dv; o null: a state pass) or the
// first pass (kStates: the span's state into the split's workspace, piece blockIdx.z).
template <bool kStates, bool kSlots, bool kRev>
__device__ __forceinline__ void fp64_consume(const args<double>& a, double* smem, uint64_t* full,
                                             uint64_t* empty, int64_t t_first, int count) {
  using Z = pipe64_sizes;
  using L = pipe64_layout;
  using P = mma_policy<double>;
  const int cw = threadIdx.x >> 5, lane = threadIdx.x & 31, rb = cw & 3, kh = cw >> 2;
  const int g = lane >> 2, c = lane & 3, v0 = blockIdx.x * Z::BV;
  state_t64 S;
  fp_state_before_span<kStates, false>(a, S, v0, 16 * rb, cw, lane);
  constexpr bool outputs = pass_outputs<kStates, kSlots, kRev>;
  const walk_out<outputs, kRev, double, double> out(a, Z::BV);
  for (int i = 0; i < count; ++i) {
    const int b = i % Z::NBUF;
    const double* buf = smem + b * L::buf;
    bar::wait(full + b, (i / Z::NBUF) & 1);
    const int64_t t_chunk = t_first + static_cast<int64_t>(i) * Z::C;
    if (kSlots && t_chunk % 64 == 0)
      fp_store_slot<double>(a.slots, static_cast<int>(t_chunk / 64), S, v0, cw, lane);
    // Stage 5, oᵀ over the warp's features: Sᵀ's tile j, columns 2c then 2c + 1, against q̃'s pair
    // at (token 8·nt + g, feature 64·kh + 8j + 2c); by j's parity, four chains in flight.
    double O[2][4] = {};
    if (outputs) {
      double part[2][2][4] = {};
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          const double2 qq = *reinterpret_cast<const double2*>(
              buf + L::q + swz<double, Z::KP>(8 * nt + g, 64 * kh + 8 * j + 2 * c));
          P::mma(part[j & 1][nt], P::afrag{{S.s[j][0], S.s[j][2]}}, P::bfrag{qq.x});
          P::mma(part[j & 1][nt], P::afrag{{S.s[j][1], S.s[j][3]}}, P::bfrag{qq.y});
        }
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) O[nt][e] = part[0][nt][e] + part[1][nt][e];
    }
    // vᵀ's A fragments, k-step ks over tokens 4·ks …, rows 16·rb …
    P::afrag vt[Z::C / 4];
#pragma unroll
    for (int ks = 0; ks < Z::C / 4; ++ks)
      vt[ks] = P::load_a([&](int m, int k) { return buf[L::v + swz<double, Z::BV>(k, m)]; },
                         16 * rb, 4 * ks, lane);
    if (outputs && kh == 1) {
      // vᵀ·Aᵀ: B at (key s, token t) = A[t][s] for s ≤ t, stage 4's partials summed.
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int ks = 0; ks < 2 * nt + 2; ++ks) {
          const int s = 4 * ks + c, t = 8 * nt + g;
          const double x = s > t ? 0.0 : quarters_sum<Z>(buf + L::part, t * Z::PS + s);
          P::mma(O[nt], vt[ks], P::bfrag{x});
        }
      // This half into exch, by chunk parity (see below).
      double* ex = smem + L::exch + ((i & 1) * 4 + rb) * L::exch_tile;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) ex[(4 * nt + e) * 32 + lane] = O[nt][e];
    }
    // Stage 3: Sᵀ·diag(E), then + vᵀ·k̂ (k̂'s B at (token, feature 64·kh + 8j + g)); DMMA
    // rounds each step to nearest, so the products go straight into S.
    const double* E = buf + L::E + 64 * kh;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const double2 e = *reinterpret_cast<const double2*>(E + 8 * j + 2 * c);
      S.s[j][0] *= e.x, S.s[j][1] *= e.y, S.s[j][2] *= e.x, S.s[j][3] *= e.y;
    }
#pragma unroll
    for (int ks = 0; ks < Z::C / 4; ++ks)
#pragma unroll
      for (int j = 0; j < 8; ++j)
        P::mma(S.s[j], vt[ks],
               P::bfrag{buf[L::g + swz<double, Z::KP>(4 * ks + c, 64 * kh + 8 * j + g)]});
    bar::arrive(empty + b);
    if (!outputs) continue;
    // The second half in exch. Its warp writes chunk i + 2's (the same parity) only after
    // this barrier of chunk i + 1, which this warp reaches once done with chunk i's.
    bar::sync(kPairBarrier + rb, 64);
    if (kh == 1) continue;
    const double* ex = smem + L::exch + ((i & 1) * 4 + rb) * L::exch_tile;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) O[nt][e] += ex[(4 * nt + e) * 32 + lane];
    out.store(t_chunk, rb, lane, O);
  }
  if constexpr (kStates)
    fp_store_piece<false>(a, blockIdx.z, S, v0, 16 * rb, cw, lane);
  else if (blockIdx.z == a.segs - 1)
    fp_store_state(a.ht, a, S, v0, cw, lane);
}

// Both passes over tokens [t_first, t_end): the mbarriers set up, then the warps' roles.
template <bool kStates, bool kSlots, bool kRev>
__device__ __forceinline__ void fp64_pipeline(const args<double>& a, int64_t t_first,
                                              int64_t t_end) {
  using Z = pipe64_sizes;
  extern __shared__ __align__(128) unsigned char raw[];
  double* smem = reinterpret_cast<double*>(raw);
  const int count = static_cast<int>((t_end - t_first + Z::C - 1) / Z::C);
  uint64_t* full = reinterpret_cast<uint64_t*>(raw + pipe64_layout::bars_bytes);
  uint64_t* empty = full + Z::NBUF;
  if (threadIdx.x == 0)
    for (int b = 0; b < Z::NBUF; ++b)
      bar::init(full + b, Z::PTHREADS), bar::init(empty + b, 32 * Z::CONSUMERS);
  __syncthreads();
  if (take_role<Z>() == role::consumer)
    fp64_consume<kStates, kSlots, kRev>(a, smem, full, empty, t_first, count);
  else
    fp64_produce<kStates, kSlots, kRev>(a, smem, full, empty, t_first, count);
}

// The walk. Grid (V slabs, heads, segments); pipe64_sizes::THREADS threads,
// pipe64_layout::bytes of shared memory. kSlots: the backward's state passes
// (args::slots); kRev: its dS walk, on the tokens backwards (args::rev).
template <bool kSlots, bool kRev = false>
__global__ void __launch_bounds__(pipe64_sizes::THREADS, 1)
    chunk_walk_fp64_pipelined_kernel(args<double> a) {
  using Z = pipe64_sizes;
  const int64_t t_first = static_cast<int64_t>(blockIdx.z) * a.seg_chunks * Z::C;
  fp64_pipeline<false, kSlots, kRev>(
      a, t_first, min(a.T_len, t_first + static_cast<int64_t>(a.seg_chunks) * Z::C));
}

// The split's first pass: piece blockIdx.z from a zero state, its state and summed gates
// into the split's workspace (split_pieces.cuh). Grid (V slabs, heads, pieces).
template <bool kRev = false>
__global__ void __launch_bounds__(pipe64_sizes::THREADS, 1)
    chunk_walk_fp64_pipelined_states_kernel(args<double> a) {
  using Z = pipe64_sizes;
  const walk::chunk_span span = walk::state_piece(blockIdx.z, a.sub_chunks, a.NT);
  fp64_pipeline<true, false, kRev>(a, static_cast<int64_t>(span.first) * Z::C,
                                   min(a.T_len, static_cast<int64_t>(span.last) * Z::C));
}

}  // namespace glabench::chunked::walk_fp
