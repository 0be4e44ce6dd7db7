// The pipelined fp64 chunk walk's ground (../forward_fp64_dmma.cuh): its sizes and the
// block's shared memory as a ring of chunk buffers, which its two kinds of warps hand
// between them (pipeline_barriers.cuh), as fp32's walk does (fp32_pipeline.cuh):
//   producers: wait `empty` (consumers done with the buffer's last chunk), cp.async the
//              next chunk into it, … stages 1, 2, 4 in place … arrive `full`;
//   consumers: wait `full`, stages 5 and 3, arrive `empty`.
// Three buffers: the producers work a chunk ahead of the consumers and load one further.
#pragma once

#include "layout.cuh"
#include "pipeline_barriers.cuh"
#include "warp_roles.cuh"

namespace glabench::chunked::walk_fp {

// 16-token chunks (one m16 row block, as the split's plan, sizes<double>), the padded key
// width, the block's V columns; CONSUMERS warps, two a 16-row block of V (a half of the
// features each), PRODUCERS warps as (feature, half of the chunk) threads.
struct pipe64_sizes {
  static constexpr int C = 16, KP = 128, BV = 64, NBUF = 3, PS = sizes<double>::PS;
  static constexpr int CONSUMERS = 8, PRODUCERS = 8;
  static constexpr int THREADS = 32 * (CONSUMERS + PRODUCERS), PTHREADS = 32 * PRODUCERS;
  // Registers a thread of each kind (warp_roles.cuh): the fewest spills, ptxas -v.
  static constexpr int CONSUMER_REGS = 144, PRODUCER_REGS = 112;
  static constexpr double kMildLog2 = sizes<double>::kMildLog2;
  static_assert(PTHREADS == 2 * KP, "a producer thread per (feature, half)");
  static_assert(C == sizes<double>::C && BV == sizes<double>::BV && KP == sizes<double>::KP,
                "the split's chunks and state tiles");
};

// A chunk buffer, in doubles: the loads land in q, g, k and v; stage 2 writes q̃ over q,
// k̃ over k (a mild chunk's, stage 4's key) and k̂ over g (the state update's key). part:
// stage 4's four partial score tiles (rows of PS), E = 2^{G[C−1]} per feature. After the
// ring: the consumers' exchange of oᵀ's second feature half ([2 chunk parities][4 row
// blocks][8 elements][32 lanes]), stage 1's per-half gate sums (fp64 [2][KP]), each
// buffer's full and empty mbarriers.
struct pipe64_layout {
  using Z = pipe64_sizes;
  static constexpr int tile_k = Z::C * Z::KP;
  static constexpr int q = 0, g = tile_k, k = 2 * tile_k, v = 3 * tile_k;
  static constexpr int part = v + Z::C * Z::BV, E = part + 4 * Z::C * Z::PS;
  static constexpr int buf = (E + Z::KP + 15) / 16 * 16;  // whole 128-byte lines
  static constexpr int exch = Z::NBUF * buf, exch_tile = 8 * 32;
  static constexpr int tots_bytes = (exch + 2 * 4 * exch_tile) * 8;
  static constexpr int bars_bytes = tots_bytes + 2 * Z::KP * 8;
  static constexpr int bytes = bars_bytes + 2 * Z::NBUF * 8;
};
static_assert(pipe64_layout::bytes <= 227 * 1024, "one block per SM");

// The consumers' pair barriers: row block rb's two warps meet on named barrier
// kPairBarrier + rb once the second half of oᵀ is in exch.
inline constexpr int kPairBarrier = 2;
static_assert(kPairBarrier > bar::kProducers && kPairBarrier + 4 <= 16, "16 named barriers");

}  // namespace glabench::chunked::walk_fp
