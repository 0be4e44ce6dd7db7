// The fp32 forward as a pipelined chunk walk on 3×TF32 (mma.sync m16n8k8, never plain
// TF32): the stages (fp32_fp64_mma/stageN_*.cuh) split between two kinds of warps of one
// block (fp32_fp64_mma/fp32_pipeline.cuh), as fp64's walk splits them (forward_fp64_dmma.cuh),
// so that the work that does not need the state overlaps the work that does.
//
//   producers (8 warps)  stage 1  fp_decay_cumsum             G, the chunk's kind
//                        stage 4  fp_strong_feature_pairs     a mixed chunk's strong features
//                                 fp_pair_partials            scores of a kPairs chunk
//                        stage 2  fp_prepare_operands         q̃, k̃ or k̂ (operand pairs), E
//                        stage 4  fp_inner_chunk_by_quarters  scores of a mild or mixed chunk
//   consumers (4 warps)  stage 5  fp_combine_t                o = scale·(q̃·S + A·v)
//                        stage 3  fp_state_update_t           S ← 2^{G[C−1]} ⊙ S + k̂ᵀ·v
//
// The consumers keep Sᵀ (V rows × features) in registers: its accumulator tiles are the A
// operand of oᵀ = Sᵀ·q̃ᵀ directly, so the state never goes through shared memory. Each
// consumer warp owns 16 V rows of the block's 64 or 128 columns (kCols); the chunk's operands
// are read by all. Chunks are 16 tokens, in a ring of four buffers with loads two chunks
// ahead.
//
// The sequence split is the fp walk's plan (walk_plan.hpp over sizes<float>::C = 32-token
// chunks), its spans walked in chunks of 16. Its first pass is the same pipeline with the
// state's stages only (kStates): producers stages 1–2 (the key operand and E), consumers
// the update, from a zero state, leaving each piece's state and summed gates; its blocks
// cover 128 columns of V (fp32_pipeline.cuh).
//
// fp16 storage (In = __half) runs the same walk: the producers widen each chunk's halves in
// shared memory as it lands (walk_io::widen), the consumers round o as they store it.
#pragma once

#include "fp32_fp64_mma/fp32_pipeline.cuh"
#include "fp32_fp64_mma/split_pieces.cuh"
#include "fp32_fp64_mma/stage1_decay_cumsum.cuh"
#include "fp32_fp64_mma/stage2_prepare_qg_kg.cuh"
#include "fp32_fp64_mma/stage3_state.cuh"
#include "fp32_fp64_mma/stage4_inner_chunk.cuh"
#include "fp32_fp64_mma/stage5_combine.cuh"
#include "walk_plan.hpp"

namespace glabench::chunked::walk_fp {

// The V columns of a first-pass block by dtype, for the split's plan (walk_plan.hpp): fp32's
// 128, fp64's a slab (its walk's too).
template <class S>
inline constexpr int first_pass_slab = sizeof(S) == 4 ? kFirstPassCols : sizes<S>::BV;

// Stage 2's operands in place (pipe_layout_of): q̃ over q and g, the key operand over k and
// k_lo — k̃ for a mild chunk (the state update then scales by E after), k̂ for others.
// A pass without outputs (kQ false: the first pass, the backward's state pass) writes the
// key operand alone.
template <class L, bool kQ>
struct pipe_operands {
  float* buf;
  __device__ void mild(int at, float qt, float kt, float) const {
    if (kQ) mma_policy<float>::store_op(buf + L::q, buf + L::q_lo, at, qt);
    mma_policy<float>::store_op(buf + L::k, buf + L::k_lo, at, kt);
  }
  __device__ void strong(int at, float qt, float kh) const { mild(at, qt, kh, 0.f); }
};

// The producers of tokens [t_first, t_first + 16·count). `full` and `empty`: the buffers'
// mbarriers (pipe_layout_of::bars_bytes). The first pass (kStates) leaves the span's summed
// gates in the split's workspace (piece blockIdx.z; slab 0's block, a thread a feature).
template <int kCols, bool kStates, bool kSlots, bool kRev, class In>
__device__ __forceinline__ void fp32_produce(const args<float, In>& a, float* smem, uint64_t* full,
                                             uint64_t* empty, int64_t t_first, int count) {
  using Z = pipe_sizes_of<kCols>;
  using L = pipe_layout_of<Z>;
  const int pt = threadIdx.x - 32 * Z::CONSUMERS, pw = pt >> 5, lane = pt & 31;
  const int f = pt % Z::KP, h = pt / Z::KP;  // stages 1–2: feature, half of the chunk
  double* tots = reinterpret_cast<double*>(reinterpret_cast<unsigned char*>(smem) + L::tots_bytes);
  const walk_io<float, Z, L, kRev, In> io(a, smem);
  auto psync = [] { bar::sync(bar::kProducers, Z::PTHREADS); };
  double gate = 0.0;  // kStates: the span's summed gates of feature f, in chunk order
  // Scores and queries: none in the first pass and the backward's state pass.
  constexpr bool scores = pass_outputs<kStates, kSlots, kRev>;

  io.template load<Z::PTHREADS, scores>(0, t_first, pt);
  if (count > 1)
    io.template load<Z::PTHREADS, scores>(1, t_first + Z::C, pt);
  else
    tc::cp_async_commit();
  for (int i = 0; i < count; ++i) {
    // The chunk two ahead, into the buffer of the chunk two behind once the consumers are
    // done with it (a group for every chunk, empty past the end, so the wait counts alike).
    const int ahead = (i + 2) % Z::NBUF;
    if (i + 2 < count) {
      if (i >= 2) bar::wait(empty + ahead, ((i - 2) / Z::NBUF) & 1);
      io.template load<Z::PTHREADS, scores>(ahead, t_first + static_cast<int64_t>(i + 2) * Z::C,
                                            pt);
    } else {
      tc::cp_async_commit();
    }
    cp_async_wait<2>();
    const int b = i % Z::NBUF;
    float* buf = smem + b * L::buf;
    // A barrier: chunk i has landed for every producer; chunk i−1's tots are read. fp16:
    // each producer reads the halves it loaded before it, writes their floats after it,
    // and a barrier more sees every float written.
    io.template widen<Z::PTHREADS, scores>(buf, pt, psync);
    if constexpr (!std::is_same_v<In, float>) psync();
    io.template scale_v<Z::PTHREADS>(buf, pt);  // the consumers' alone, after `full`
    double l[Z::C / 2];
    constexpr double kHalf = -Z::kMildLog2 / 2;
    const bool mild = bar::sync_and(bar::kProducers, Z::PTHREADS,
                                    fp_decay_cumsum<float, Z, L>(buf, tots, f, h, l) >= kHalf);
    if constexpr (kStates) gate += chunk_gates<Z::KP>(tots, f, h).last;
    // A chunk not mild is mixed where each feature not mild has summed its gates below
    // kHalf (kMixed, fp32_pipeline.cuh); else (positive gates only) pair by pair.
    const bool f_mild = fmin(tots[f], tots[Z::KP + f]) >= kHalf;
    const bool mixed =
        scores && !mild &&
        bar::sync_and(bar::kProducers, Z::PTHREADS, f_mild || tots[f] + tots[Z::KP + f] < kHalf);
    if (mixed) {
      unsigned* strong = reinterpret_cast<unsigned*>(buf + L::strong);
      if (h == 0) {  // warps 0–3: a bit a feature
        const unsigned m = __ballot_sync(0xffffffffu, !f_mild);
        if (lane == 0) strong[pw] = m;
      }
      double* prefix =
          reinterpret_cast<double*>(reinterpret_cast<unsigned char*>(smem) + L::prefix_bytes);
      const double off = chunk_gates<Z::KP>(tots, f, h).off;
#pragma unroll
      for (int u = 0; u < Z::C / 2; ++u) prefix[f * (Z::C + 1) + h * (Z::C / 2) + u] = off + l[u];
      psync();
      fp_strong_feature_pairs<Z, L>(buf, strong, prefix, pt);
      psync();  // the raw tiles read, before stage 2 writes over them
    } else if (scores && !mild) {
      fp_pair_partials<float, Z, L, Z::PS>(buf, buf + L::part, pw, lane);
      psync();
    }
    fp_prepare_operands<float, Z, L>(buf, buf + L::E, tots, f, h, l, mild || (mixed && f_mild),
                                     pipe_operands<L, scores>{buf});
    if (mixed && h == 1) {  // the state update's decays: after for k̃, before for k̂
      buf[L::E_pre + f] = f_mild ? 1.f : buf[L::E + f];
      if (!f_mild) buf[L::E + f] = 1.f;
    }
    if (pt == 0) reinterpret_cast<int*>(buf)[L::kind] = mixed ? kMixed : mild ? kMild : kPairs;
    if (scores && (mild || mixed)) {
      psync();  // operands written
      fp_inner_chunk_by_quarters<float, Z, L>(buf, buf + L::q_lo, buf + L::k_lo, buf + L::part, pw,
                                              lane);
    }
    bar::arrive(full + b);
  }
  if (kStates && h == 1 && blockIdx.x == 0) split_gate(a, blockIdx.z)[f] = gate;
}

// The consumers of the same span: the walk (o, and ht after the last segment) or the
// first pass (kStates: the span's state into the split's workspace, piece blockIdx.z).
template <int kCols, bool kStates, bool kSlots, bool kRev, class In>
__device__ __forceinline__ void fp32_consume(const args<float, In>& a, const float* smem,
                                             uint64_t* full, uint64_t* empty, int64_t t_first,
                                             int count) {
  using Z = pipe_sizes_of<kCols>;
  using L = pipe_layout_of<Z>;
  using P = mma_policy<float>;
  // v as stored (the dS walk's v′ = do: fp16 takes its scale on k′, walk_io::widen).
  constexpr bool kExactV = exact_in_tf32<In>;
  const int cw = threadIdx.x >> 5, lane = threadIdx.x & 31, v0 = blockIdx.x * Z::BV;
  state_t_regs<Z> S;
  fp_state_before_span<kStates, (Z::BV > sizes<float>::BV)>(a, S, v0, 16 * cw, cw, lane);
  constexpr bool outputs = pass_outputs<kStates, kSlots, kRev>;
  const walk_out<outputs, kRev, float, In> out(a, Z::BV);
  for (int i = 0; i < count; ++i) {
    const int b = i % Z::NBUF;
    const float* buf = smem + b * L::buf;
    bar::wait(full + b, (i / Z::NBUF) & 1);
    const int kind = reinterpret_cast<const int*>(buf)[L::kind];
    const int64_t t_chunk = t_first + static_cast<int64_t>(i) * Z::C;
    if (kSlots && t_chunk % 64 == 0)
      fp_store_slot<float>(a.slots, static_cast<int>(t_chunk / 64), S, v0, cw, lane);
    float O[Z::C / 8][4];
    if (outputs) fp_combine_t<Z>(buf + L::q, buf + L::q_lo, S, lane, O);
    P::afrag vt[Z::C / 8];
#pragma unroll
    for (int ks = 0; ks < Z::C / 8; ++ks) vt[ks] = fp_vt_frag<Z>(buf + L::v, ks, cw, lane);
    if (outputs)
      fp_combine_t_scores<Z, kExactV>(buf + L::part, kind == kMixed ? buf + L::pairs : nullptr, vt,
                                      lane, O);
    const float* E = buf + L::E;
    fp_state_update_t<Z, kExactV>(buf + L::k, buf + L::k_lo,
                                  kind == kMild    ? nullptr
                                  : kind == kMixed ? buf + L::E_pre
                                                   : E,
                                  kind == kPairs ? nullptr : E, vt, S, lane);
    bar::arrive(empty + b);
    if (!outputs) continue;
    out.store(t_first + static_cast<int64_t>(i) * Z::C, cw, lane, O);
  }
  if constexpr (kStates)
    fp_store_piece<(Z::BV > sizes<float>::BV)>(a, blockIdx.z, S, v0, 16 * cw, cw, lane);
  else if (blockIdx.z == a.segs - 1)
    fp_store_state(a.ht, a, S, v0, cw, lane);
}

// Both passes over tokens [t_first, t_end): the mbarriers set up, then the warps' roles.
template <int kCols, bool kStates, bool kSlots, bool kRev, class In>
__device__ __forceinline__ void fp32_pipeline(const args<float, In>& a, int64_t t_first,
                                              int64_t t_end) {
  using Z = pipe_sizes_of<kCols>;
  extern __shared__ __align__(128) unsigned char raw[];
  float* smem = reinterpret_cast<float*>(raw);
  const int count = static_cast<int>((t_end - t_first + Z::C - 1) / Z::C);
  uint64_t* full = reinterpret_cast<uint64_t*>(raw + pipe_layout_of<Z>::bars_bytes);
  uint64_t* empty = full + Z::NBUF;
  if (threadIdx.x == 0)
    for (int b = 0; b < Z::NBUF; ++b)
      bar::init(full + b, Z::PTHREADS), bar::init(empty + b, 32 * Z::CONSUMERS);
  __syncthreads();
  if (take_role<Z>() == role::consumer)
    fp32_consume<kCols, kStates, kSlots, kRev, In>(a, smem, full, empty, t_first, count);
  else
    fp32_produce<kCols, kStates, kSlots, kRev, In>(a, smem, full, empty, t_first, count);
}

// The walk. Grid (kCols-column blocks of V, heads, segments); pipe_sizes_of<kCols>::THREADS
// threads, pipe_layout_of<…>::bytes of shared memory. kSlots: the backward's
// state passes (args::slots); kRev: its dS walk, on the tokens backwards (args::rev).
template <int kCols, bool kSlots, bool kRev = false, class In = float>
__global__ void __launch_bounds__(pipe_sizes_of<kCols>::THREADS, 1)
    chunk_walk_fp32_pipelined_kernel(args<float, In> a) {
  constexpr int plan_chunk = sizes<float>::C;  // the split's chunks
  const int64_t t_first = static_cast<int64_t>(blockIdx.z) * a.seg_chunks * plan_chunk;
  fp32_pipeline<kCols, false, kSlots, kRev, In>(
      a, t_first, min(a.T_len, t_first + static_cast<int64_t>(a.seg_chunks) * plan_chunk));
}

// The split's first pass: piece blockIdx.z; grid x the 128-column blocks of V,
// pipe_sizes_of<kFirstPassCols>::THREADS threads, pipe_layout_of<…>::bytes.
template <bool kRev = false, class In = float>
__global__ void __launch_bounds__(pipe_sizes_of<kFirstPassCols>::THREADS, 1)
    chunk_walk_fp32_pipelined_states_kernel(args<float, In> a) {
  constexpr int plan_chunk = sizes<float>::C;
  const walk::chunk_span span = walk::state_piece(blockIdx.z, a.sub_chunks, a.NT);
  const int64_t t_first = static_cast<int64_t>(span.first) * plan_chunk;
  fp32_pipeline<kFirstPassCols, true, false, kRev, In>(
      a, t_first, min(a.T_len, static_cast<int64_t>(span.last) * plan_chunk));
}

}  // namespace glabench::chunked::walk_fp
