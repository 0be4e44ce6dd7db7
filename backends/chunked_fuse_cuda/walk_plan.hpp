// The chunk walks' launch shape on the host: the bf16 walk's sizes, and the sequence
// split's plan for long sequences with few heads (forward_bf16_mma.cuh,
// chunk_walk_segment_states_kernel; the fp32 and fp64 walks split alike, in their chunks).
// Plain C++: the plugin's launch code and the CPU test tests/walk_plan_test.cpp use it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

// The piece mappings below run in the kernels and in the CPU test.
#ifdef __CUDACC__
#define GLABENCH_WALK_HD __host__ __device__
#else
#define GLABENCH_WALK_HD
#endif

namespace glabench::chunked::walk {

// Tokens a chunk and a sub-chunk, the padded key width (K ≤ KP), the V slab of a block,
// the block's threads.
inline constexpr int C = 64, SUB = 16, SUBS = C / SUB, KP = 128, BV = 64, THREADS = 256;

// The sequence split: the walk runs `segs` segments of `seg_chunks` chunks, one block
// each; a first pass walks every segment but the last in `subs` pieces of `sub_chunks`
// chunks, from a zero state, for the state each piece adds. Enough (V slab, head,
// segment) blocks to fill the GPU's SMs, at most 8 segments of at least 4 chunks; the
// first pass's pieces fill the SMs too (pieces_rule). A walk block covers `walk_slab` columns
// of V and a first-pass block `first_slab` (BV, or more where one block takes several slabs).
struct plan {
  int segs, seg_chunks, subs, sub_chunks;
  // The first pass's pieces: every segment's but the last's, or every segment's where a
  // sequence-parallel rank wants its whole contribution (launch.hpp).
  int pieces(bool every_segment = false) const { return (every_segment ? segs : segs - 1) * subs; }
  // The chunks on the split's longest path, `per_piece` first-pass blocks a piece on `sms`
  // SMs: the first pass's waves of blocks, a piece's chunks each, then a segment's walk.
  int path_chunks(int per_piece, int sms) const {
    return (pieces() * per_piece + sms - 1) / sms * sub_chunks + seg_chunks;
  }
};

// How many pieces (at most 4) the first pass cuts each segment into:
// - one_wave (the bf16 walks): as many as leave the first pass one wave of blocks;
// - whole_waves (the fp walks, fp_walk_pieces): the count that makes the split's longest
//   path shortest (plan::path_chunks), fewer pieces on a tie. 3 segments of 32 blocks on 132
//   SMs: 4 pieces a segment, 3 waves of a quarter segment, not 1 wave of whole segments.
enum class pieces_rule { one_wave, whole_waves };
inline constexpr pieces_rule fp_walk_pieces = pieces_rule::whole_waves;

// `chunk`: the walk's tokens a chunk (C for bf16; the fp32/fp64 walk's are shorter).
inline plan plan_split(int B, int H, int V, int64_t T, int sms, int chunk = C, int first_slab = BV,
                       int walk_slab = BV, pieces_rule rule = pieces_rule::one_wave) {
  const int base = B * H * ((V + walk_slab - 1) / walk_slab),
            first_base = B * H * ((V + first_slab - 1) / first_slab);
  const int nt = static_cast<int>((T + chunk - 1) / chunk);
  const int segs = std::max(1, std::min({8, sms / base, nt / 4}));
  if (segs == 1) return {1, nt, 1, nt};
  auto cut = [&](int subs) {
    const int sub_chunks = (nt + segs * subs - 1) / (segs * subs), seg_chunks = subs * sub_chunks;
    return plan{(nt + seg_chunks - 1) / seg_chunks, seg_chunks, subs, sub_chunks};
  };
  if (rule == pieces_rule::one_wave)
    return cut(std::max(1, std::min(4, sms / ((segs - 1) * first_base))));
  plan best = cut(1);  // the shortest path; counted up, a tie keeps the fewer pieces
  int best_length = best.path_chunks(first_base, sms);
  for (int subs = 2; subs <= 4; ++subs)
    if (const plan p = cut(subs); p.path_chunks(first_base, sms) < best_length)
      best = p, best_length = p.path_chunks(first_base, sms);
  return best;
}

// The chunks [first, last) of a first-pass piece (clipped to nt chunks). The forward's
// (and the state walk's) piece m cuts segment m / subs, for the segments before the last;
// the dS walk's piece m cuts segment m / subs + first_seg: from the second segment
// (first_seg = 1), the ones that walk reaches walking backwards, or from the first (0).
struct chunk_span {
  int first, last;
};
GLABENCH_WALK_HD inline chunk_span state_piece(int m, int sub_chunks, int nt) {
  const int first = m * sub_chunks < nt ? m * sub_chunks : nt;
  return {first, first + sub_chunks < nt ? first + sub_chunks : nt};
}
GLABENCH_WALK_HD inline chunk_span dstate_piece(int m, int subs, int sub_chunks, int nt,
                                                int first_seg = 1) {
  return state_piece(m + first_seg * subs, sub_chunks, nt);  // seg_chunks = subs · sub_chunks
}

// The workspace holds the most pieces any GPU of up to kMaxSms SMs plans (the count is
// not monotonic in the SMs). A launch on a larger GPU plans as if it had kMaxSms.
inline constexpr int kMaxSms = 256;
inline int max_pieces(int B, int H, int V, int64_t T, int chunk = C, int first_slab = BV,
                      bool every_segment = false, int walk_slab = BV,
                      pieces_rule rule = pieces_rule::one_wave) {
  int most = 0;
  for (int sms = 1; sms <= kMaxSms; ++sms)
    most = std::max(
        most,
        plan_split(B, H, V, T, sms, chunk, first_slab, walk_slab, rule).pieces(every_segment));
  return most;
}
// Each piece holds a state tile per (head, V slab) in `state_bytes`-byte elements and a
// gate sum per (head, feature) in `gate_bytes`-byte ones (fp32 for bf16; the fp32/fp64
// walk keeps T and fp64).
inline size_t pieces_workspace_bytes(size_t pieces, int B, int H, int V,
                                     size_t state_bytes = sizeof(float),
                                     size_t gate_bytes = sizeof(float)) {
  const size_t heads = static_cast<size_t>(B) * H, slabs = (V + BV - 1) / BV;
  return pieces * heads * (slabs * KP * BV * state_bytes + KP * gate_bytes);
}
inline size_t split_workspace_bytes(int B, int64_t T, int H, int V, int chunk = C,
                                    size_t state_bytes = sizeof(float),
                                    size_t gate_bytes = sizeof(float), int first_slab = BV,
                                    bool every_segment = false, int walk_slab = BV,
                                    pieces_rule rule = pieces_rule::one_wave) {
  return pieces_workspace_bytes(
      max_pieces(B, H, V, T, chunk, first_slab, every_segment, walk_slab, rule), B, H, V,
      state_bytes, gate_bytes);
}
// The most pieces a plan makes for a sequence of any length ((8 − 1) segments of 4): the
// bound for calls whose lengths are not known when the workspace is sized (the sequences
// of a packed batch).
inline constexpr int kMostPieces = 7 * 4;
inline plan plan_launch(int B, int H, int V, int64_t T, int sms, int chunk = C, int first_slab = BV,
                        int walk_slab = BV, pieces_rule rule = pieces_rule::one_wave) {
  return plan_split(B, H, V, T, std::min(sms, kMaxSms), chunk, first_slab, walk_slab, rule);
}

// The split's workspace for an fp walk (its pieces by fp_walk_pieces) whose block is BV or
// `wide` columns by shape (fp32's: fp32_walk_slab, below; a first pass of `wide` columns
// either way): the larger.
inline size_t split_workspace_bytes_either_width(int B, int64_t T, int H, int V, int chunk,
                                                 size_t state_bytes, size_t gate_bytes, int wide) {
  auto bytes = [&](int walk_slab) {
    return split_workspace_bytes(B, T, H, V, chunk, state_bytes, gate_bytes, wide, false, walk_slab,
                                 fp_walk_pieces);
  };
  return std::max(bytes(BV), bytes(wide));
}

// fp32's walk block (forward_fp32_3xtf32.cuh): `wide` columns (the first pass's; 8
// consumer warps, the producers' stages once a head) where V > BV and the plan at that
// width leaves segments of at least 1024 tokens, else BV; `forced` (0: none) as the call
// forces it, any width but `wide` as BV. H100, 2026-12-07, 4b51cef (report
// 2026-12-07-h100-fp32-walk-block-width, in git history): 128 columns took fwd ×0.87–0.92
// at B4 T2048 and B2 T16384 H16 D128 (segments of 1024 and 4096 tokens), ×1.37 at
// B4 T1024 H4 D100 (segments of 128) and at V = 64.
inline int fp32_walk_slab(int B, int H, int V, int64_t T, int sms, int chunk, int wide,
                          int forced = 0) {
  if (forced) return forced == wide ? wide : BV;
  if (V <= BV) return BV;
  const plan p = plan_launch(B, H, V, T, sms, chunk, wide, wide, fp_walk_pieces);
  return int64_t{p.seg_chunks} * chunk >= 1024 ? wide : BV;
}

}  // namespace glabench::chunked::walk
