// The pipelined fp32 chunk walk's ground (../forward_fp32_3xtf32.cuh): its sizes and the
// block's shared memory as a ring of chunk buffers, which its two kinds of warps hand
// between them (pipeline_barriers.cuh).
//
// Producer warps load a chunk and run stages 1, 2 and 4 on it — the gates, the operands and
// the scores, none of which needs the state — while the consumer warps, which keep the
// state in registers, run stages 3 and 5 on the chunk before. A buffer goes round:
//   producers: wait `empty` (consumers done with the buffer's last chunk), cp.async the
//              chunk two ahead into it, … stages 1, 2, 4 in place … arrive `full`;
//   consumers: wait `full`, stages 5 and 3, arrive `empty`.
#pragma once

#include "layout.cuh"
#include "pipeline_barriers.cuh"
#include "warp_roles.cuh"

namespace glabench::chunked::walk_fp {

// 16-token chunks (one m16 row block; the ring of NBUF buffers then fits with loads two
// chunks ahead), the padded key width, the block's V columns; CONSUMERS warps of 16 V rows
// each, PRODUCERS warps as (feature, half of the chunk) threads.
template <int BV_>
struct pipe_sizes_of {
  static constexpr int C = 16, KP = 128, BV = BV_, NBUF = 4;
  // The scores' partial tiles (four C×C, one a feature quarter): rows of PS floats, 20 so
  // that the consumers' fragment reads (8 rows × 4 columns) hit 32 banks.
  static constexpr int PS = 20;
  static constexpr int CONSUMERS = BV / 16, PRODUCERS = 8;
  static constexpr int THREADS = 32 * (CONSUMERS + PRODUCERS), PTHREADS = 32 * PRODUCERS;
  // Registers a thread of each kind at 16 warps (warp_roles.cuh): the fewest spills, ptxas -v.
  static constexpr int CONSUMER_REGS = THREADS == 512 ? 152 : 0,
                       PRODUCER_REGS = THREADS == 512 ? 104 : 0;
  static constexpr double kMildLog2 = sizes<float>::kMildLog2;
  static_assert(PTHREADS == 2 * KP, "a producer thread per (feature, half)");
};
// A walk block takes 64 or 128 columns of V (4 or 8 consumer warps; launch.cu picks), a
// first-pass block 128: both slabs of a V ≤ 128 head, so that the producers' stages, whose
// work is per head, run once for both (the consumers' work is per column).
inline constexpr int kFirstPassCols = 128;

// A chunk's kind, which sets how its scores are summed and where the state update applies
// its decays E = 2^{G[C−1]}:
//   kMild   every feature's halves sum their log2 gates to ≥ −kMildLog2/2: stage 4 on the
//           tensor cores from one reference, q̃ = q·2^{G}, κ = k̃ = k·2^{−G} (both ≤ 2^{96}
//           off), E after the update;
//   kMixed  the features not mild (`strong`) sum their gates below −kMildLog2/2 over the
//           chunk: they take κ = k̂ = k·2^{G[C−1]−G}, E before the update, and the tensor
//           cores' scores then carry q̃·k̂ for them, their pairs' terms times 2^{G[C−1]} <
//           2^{−48}: below fp32's rounding. Their terms themselves are summed pair by pair
//           (fp_strong_feature_pairs) into the `pairs` tile. The mild features as in kMild;
//   kPairs  any other chunk (a feature not mild whose chunk sums to ≥ −kMildLog2/2, which
//           takes a positive gate): every score pair by pair (fp_pair_partials), κ = k̂.
inline constexpr int kPairs = 0, kMild = 1, kMixed = 2;

// A chunk buffer, in floats. The loads land in q, g, k and v; stage 2 writes the operand
// pairs in place: q̃ over q (hi) and g (lo; stage 1 has read g), the key operand over k (hi)
// and k_lo — k̃ in a mild chunk, which stage 4 and the state update share, k̂ in a kPairs
// one, either by feature in a mixed one.
// part: stage 4's four partial score tiles, `pairs` a mixed chunk's strong features' scores,
// E and E_pre the decays after and before the state update (E = 2^{G[C−1]} per feature
// but in a mixed chunk), `kind` the chunk's, `strong` its strong features (4 bit masks).
// After the ring: stage 1's per-half gate sums (fp64 [2][KP]), each buffer's full and
// empty mbarriers, and a mixed chunk's log2 gates summed from its start (fp64 [KP][C + 1],
// the producers' alone, from stage 1 to fp_strong_feature_pairs).
template <class Z>
struct pipe_layout_of {
  static constexpr int tile_k = Z::C * Z::KP;
  static constexpr int q = 0, g = tile_k, q_lo = g, k = 2 * tile_k, k_lo = 3 * tile_k,
                       v = 4 * tile_k;
  static constexpr int part = v + Z::C * Z::BV, pairs = part + 4 * Z::C * Z::PS,
                       E = pairs + Z::C * Z::PS, E_pre = E + Z::KP, kind = E_pre + Z::KP,
                       strong = kind + 1;
  static constexpr int buf = (strong + Z::KP / 32 + 31) / 32 * 32;  // whole 128-byte lines
  static constexpr int tots_bytes = Z::NBUF * buf * 4;
  static constexpr int bars_bytes = tots_bytes + 2 * Z::KP * 8;
  static constexpr int prefix_bytes = bars_bytes + 2 * Z::NBUF * 8;
  static constexpr int bytes = prefix_bytes + Z::KP * (Z::C + 1) * 8;
};
static_assert(pipe_layout_of<pipe_sizes_of<128>>::bytes <= 227 * 1024, "one block per SM");

}  // namespace glabench::chunked::walk_fp
