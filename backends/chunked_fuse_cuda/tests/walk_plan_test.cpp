// The chunk walk's sequence split (walk_plan.hpp), on the CPU: segments cover the chunks
// once and in order, the last one non-empty; the first pass's pieces tile every segment
// but the last, and the dS walk's pieces every segment but the first, each carried in the
// order the walks apply them; the walk asks for no more blocks than the GPU has SMs, nor
// does the bf16 walks' first pass (one_wave), and the fp walks' (whole_waves) makes the
// split's path no longer than one wave would; and the workspace holds the pieces of every
// GPU, so a launch never writes past it. Each holds for the bf16 walk's 64-token chunks and
// the fp32/fp64 walk's 32 and 16, under either pieces rule.
#define BOOST_TEST_MODULE walk_plan
#include "../walk_plan.hpp"

#include <algorithm>
#include <array>
#include <boost/test/included/unit_test.hpp>

namespace walk = glabench::chunked::walk;

namespace {
int chunks(int64_t T, int chunk = walk::C) {
  return static_cast<int>((T + chunk - 1) / chunk);
}
constexpr int kChunks[] = {walk::C, 32, 16};  // bf16; fp32 and fp64 (fp32_fp64_mma/layout.cuh)
// The columns of a first-pass block and of a walk block: bf16's and fp64's, and fp32's
// (a block 128 columns in both passes).
struct slabs {
  int first, walk;
};
constexpr slabs kSlabs[] = {
    {walk::BV, walk::BV}, {2 * walk::BV, walk::BV}, {2 * walk::BV, 2 * walk::BV}};
constexpr walk::pieces_rule kRules[] = {walk::pieces_rule::one_wave,
                                        walk::pieces_rule::whole_waves};
}  // namespace

BOOST_AUTO_TEST_CASE(one_segment_when_the_heads_fill_the_gpu) {
  const walk::plan p = walk::plan_split(4, 16, 128, 2048, 132);  // 128 blocks on 132 SMs
  BOOST_TEST(p.segs == 1);
  BOOST_TEST(p.pieces() == 0);
  BOOST_TEST(p.seg_chunks == 32);
}

BOOST_AUTO_TEST_CASE(no_split_when_the_sm_count_is_unknown) {
  const walk::plan p = walk::plan_launch(2, 16, 128, 16384, 0);  // sm_count() failed
  BOOST_TEST(p.segs == 1);
  BOOST_TEST(p.pieces() == 0);
}

BOOST_AUTO_TEST_CASE(long_sequence_with_few_heads_splits) {
  const walk::plan p = walk::plan_split(2, 16, 128, 16384, 132);  // 64 blocks, 256 chunks
  BOOST_TEST(p.segs == 2);
  BOOST_TEST(p.subs == 2);
  BOOST_TEST(p.sub_chunks == 64);
  BOOST_TEST(p.seg_chunks == 128);
  BOOST_TEST(p.pieces() * 64 <= 132);
}

// A first pass whose block takes both 64-column slabs of a head: twice the pieces.
BOOST_AUTO_TEST_CASE(a_wider_first_pass_block_gets_more_pieces) {
  const walk::plan p = walk::plan_split(2, 16, 128, 16384, 132, 32, 2 * walk::BV);  // 512 chunks
  BOOST_TEST(p.segs == 2);
  BOOST_TEST(p.subs == 4);
  BOOST_TEST(p.sub_chunks == 64);
  BOOST_TEST(p.seg_chunks == 256);
  BOOST_TEST(p.pieces() * 32 <= 132);
}

// fp32's walk takes both slabs in one block too: half the blocks a segment, twice the
// segments.
BOOST_AUTO_TEST_CASE(a_wider_walk_block_gets_more_segments) {
  const walk::plan p =
      walk::plan_split(2, 16, 128, 16384, 132, 32, 2 * walk::BV, 2 * walk::BV);  // 32 blocks
  BOOST_TEST(p.segs == 4);
  BOOST_TEST(p.subs == 1);
  BOOST_TEST(p.sub_chunks == 128);
  BOOST_TEST(p.seg_chunks == 128);
  BOOST_TEST(p.segs * 32 <= 132);
  BOOST_TEST(p.pieces() * 32 <= 132);
}

BOOST_AUTO_TEST_CASE(segments_and_pieces_cover_and_fit) {
  for (int chunk : kChunks)
    for (const auto [first_slab, walk_slab] : kSlabs)
      for (int base_h = 1; base_h <= 48; ++base_h)
        for (int V : {8, 64, 100, 128, 256})
          for (int64_t T : {1, 63, 64, 65, 255, 256, 1000, 4096, 16384, 65536})
            for (int sms : {1, 8, 66, 114, 132, 144, 256}) {
              const int nt = chunks(T, chunk), base = base_h * ((V + walk_slab - 1) / walk_slab);
              const int first_base = base_h * ((V + first_slab - 1) / first_slab);
              const walk::plan one_wave =
                  walk::plan_split(1, base_h, V, T, sms, chunk, first_slab, walk_slab);
              for (walk::pieces_rule rule : kRules) {
                const walk::plan p =
                    walk::plan_split(1, base_h, V, T, sms, chunk, first_slab, walk_slab, rule);
                BOOST_TEST_REQUIRE(p.segs >= 1);
                BOOST_TEST_REQUIRE(p.segs <= 8);
                BOOST_TEST(p.seg_chunks == p.subs * p.sub_chunks);
                BOOST_TEST((p.segs - 1) * p.seg_chunks < nt);  // the last segment has chunks
                BOOST_TEST(p.segs * p.seg_chunks >= nt);       // and the segments reach the end
                if (p.segs > 1) {
                  BOOST_TEST(p.segs * base <= sms);
                  BOOST_TEST(p.subs >= 1);
                  BOOST_TEST(p.subs <= 4);
                  BOOST_TEST(p.sub_chunks >= 1);
                  if (rule == walk::pieces_rule::one_wave)
                    BOOST_TEST(p.pieces() * first_base <= sms);
                  else
                    BOOST_TEST(p.path_chunks(first_base, sms) <=
                               one_wave.path_chunks(first_base, sms));
                }
              }
            }
}

// The fp walks' first pass in whole waves (fp_walk_pieces), fp32's 32-token chunks and
// 128-column blocks on 132 SMs. B2 T16384 H16 D128: 4 segments of 128 chunks, 32 blocks a
// piece, the first 3 segments cut; 4 pieces a segment (384 blocks, 3 waves of 32 chunks,
// then the walk: 224 chunks), not 1 (96 blocks, one wave of 128: 256). The other shapes fp32
// measured keep one wave's pieces.
BOOST_AUTO_TEST_CASE(the_fp_walks_first_pass_takes_whole_waves) {
  constexpr int wide = 2 * walk::BV;
  auto plan = [&](int B, int H, int V, int64_t T, walk::pieces_rule rule) {
    return walk::plan_split(B, H, V, T, 132, 32, wide, wide, rule);
  };
  const walk::plan one = plan(2, 16, 128, 16384, walk::pieces_rule::one_wave),
                   whole = plan(2, 16, 128, 16384, walk::fp_walk_pieces);
  BOOST_TEST(one.segs == 4);
  BOOST_TEST(whole.segs == 4);
  BOOST_TEST(whole.seg_chunks == 128);
  BOOST_TEST(one.subs == 1);
  BOOST_TEST(whole.subs == 4);
  BOOST_TEST(whole.sub_chunks == 32);
  BOOST_TEST(one.path_chunks(32, 132) == 256);
  BOOST_TEST(whole.path_chunks(32, 132) == 224);
  for (const auto [B, H, V, T] : {std::array<int, 4>{4, 16, 128, 2048}, {4, 4, 100, 1024}}) {
    const int slab = walk::fp32_walk_slab(B, H, V, T, 132, 32, wide);
    BOOST_TEST(walk::plan_split(B, H, V, T, 132, 32, wide, slab, walk::fp_walk_pieces).subs ==
               walk::plan_split(B, H, V, T, 132, 32, wide, slab).subs);
  }
}

BOOST_AUTO_TEST_CASE(the_workspace_holds_every_gpus_pieces) {
  for (int heads = 1; heads <= 130; ++heads)
    for (int V : {64, 128, 256})
      for (int64_t nt = 1; nt <= 600; nt += (nt < 80 ? 1 : 37)) {
        const int64_t T = nt * walk::C;
        const int cap = walk::max_pieces(1, heads, V, T);
        const size_t per_piece =
            static_cast<size_t>(heads) *
            (((V + walk::BV - 1) / walk::BV) * walk::KP * walk::BV + walk::KP) * sizeof(float);
        BOOST_TEST_REQUIRE(walk::split_workspace_bytes(1, T, heads, V) == cap * per_piece);
        for (int sms : {1, 16, 66, 78, 108, 114, 132, 144, 170, 256, 1000})
          BOOST_TEST_REQUIRE(walk::plan_launch(1, heads, V, T, sms).pieces() <= cap);
      }
}

// The fp32/fp64 walk: its pieces in its own chunks, states in T and gate sums in fp64.
BOOST_AUTO_TEST_CASE(the_fp_walks_workspace_holds_every_gpus_pieces) {
  for (int chunk : {32, 16})
    for (size_t state_bytes : {sizeof(float), sizeof(double)})
      for (const auto [first_slab, walk_slab] : kSlabs)
        for (int heads = 1; heads <= 70; heads += 3)
          for (int64_t T : {16, 100, 1000, 4096, 16384, 65536})
            for (walk::pieces_rule rule : kRules) {
              const int cap =
                  walk::max_pieces(1, heads, 128, T, chunk, first_slab, false, walk_slab, rule);
              const size_t per_piece = static_cast<size_t>(heads) *
                                       (2 * walk::KP * walk::BV * state_bytes + walk::KP * 8);
              BOOST_TEST_REQUIRE(walk::split_workspace_bytes(1, T, heads, 128, chunk, state_bytes,
                                                             8, first_slab, false, walk_slab,
                                                             rule) == cap * per_piece);
              for (int sms : {1, 66, 78, 114, 132, 144, 256, 1000})
                BOOST_TEST_REQUIRE(
                    walk::plan_launch(1, heads, 128, T, sms, chunk, first_slab, walk_slab, rule)
                        .pieces() <= cap);
            }
}

// fp32's walk block by shape (launch.cu's fp_walk_slab), 32-token chunks on 132 SMs: 128
// columns at the shapes it measured faster, 64 at the seed's (segments of 128 tokens) and
// at V = 64; a forced width as forced, any but 128 as 64.
BOOST_AUTO_TEST_CASE(fp32_walk_block_by_shape) {
  auto slab = [](int B, int H, int V, int64_t T, int forced = 0) {
    return walk::fp32_walk_slab(B, H, V, T, 132, 32, 2 * walk::BV, forced);
  };
  BOOST_TEST(slab(4, 16, 128, 2048) == 128);   // segments of 1024 tokens
  BOOST_TEST(slab(2, 16, 128, 16384) == 128);  // 4096
  BOOST_TEST(slab(4, 4, 100, 1024) == 64);     // 128
  BOOST_TEST(slab(8, 16, 64, 2048) == 64);
  BOOST_TEST(slab(4, 4, 100, 1024, 128) == 128);
  BOOST_TEST(slab(2, 16, 128, 16384, 64) == 64);
  BOOST_TEST(slab(2, 16, 128, 16384, 96) == 64);
}

// The fp32 workspace, sized for both widths (split_workspace_bytes_either_width, as launch.cu's
// fp_split_workspace_bytes); whichever width a launch picks, on any GPU, its pieces fit.
BOOST_AUTO_TEST_CASE(the_fp32_workspace_holds_either_widths_pieces) {
  constexpr int wide = 2 * walk::BV;
  for (int heads = 1; heads <= 70; heads += 3)
    for (int V : {8, 64, 100, 128, 192, 256})
      for (int64_t T : {16, 100, 1000, 2048, 4096, 16384, 65536}) {
        const size_t held =
            walk::split_workspace_bytes_either_width(1, T, heads, V, 32, sizeof(float), 8, wide);
        for (int sms : {1, 66, 78, 114, 132, 144, 256, 1000})
          for (int forced : {0, walk::BV, wide}) {
            const int slab = walk::fp32_walk_slab(1, heads, V, T, sms, 32, wide, forced);
            const int pieces =
                walk::plan_launch(1, heads, V, T, sms, 32, wide, slab, walk::fp_walk_pieces)
                    .pieces();
            BOOST_TEST_REQUIRE(
                walk::pieces_workspace_bytes(pieces, 1, heads, V, sizeof(float), 8) <= held);
          }
      }
}

// What each segment's walk starts from: the forward and state walks carry h0 over pieces
// 0 … s·subs − 1, which must tile chunks [0, segment s's first); the dS walk carries dht
// back over pieces (segs−1)·subs − 1 … s·subs, which must tile (from the end down)
// chunks [segment s's end, nt), each piece ending where the one applied before it starts.
BOOST_AUTO_TEST_CASE(pieces_carry_each_segment_across_the_rest) {
  for (int chunk : kChunks)
    for (const auto [first_slab, walk_slab] : kSlabs)
      for (int heads = 1; heads <= 40; ++heads)
        for (int64_t T : {64, 65, 1000, 4096, 16384, 65536, 131072})
          for (int sms : {16, 78, 132, 144, 256})
            for (walk::pieces_rule rule : kRules) {
              const int nt = chunks(T, chunk);
              const walk::plan p =
                  walk::plan_launch(1, heads, 128, T, sms, chunk, first_slab, walk_slab, rule);
              for (int s = 0; s < p.segs; ++s) {
                const int seg_first = s * p.seg_chunks;
                const int seg_end = std::min(nt, seg_first + p.seg_chunks);
                int at = 0;  // forward: pieces in order from the sequence's start
                for (int m = 0; m < s * p.subs; ++m) {
                  const walk::chunk_span c = walk::state_piece(m, p.sub_chunks, nt);
                  BOOST_TEST_REQUIRE(c.first == at);
                  BOOST_TEST_REQUIRE(c.last > c.first);  // segments before the last are full
                  at = c.last;
                }
                BOOST_TEST_REQUIRE(at == seg_first);
                at = nt;  // backward: pieces from the sequence's end down
                for (int m = (p.segs - 1) * p.subs - 1; m >= s * p.subs; --m) {
                  const walk::chunk_span c = walk::dstate_piece(m, p.subs, p.sub_chunks, nt);
                  if (c.first == c.last) continue;  // past the end of a short last segment
                  BOOST_TEST_REQUIRE(c.last == at);
                  at = c.first;
                }
                BOOST_TEST_REQUIRE(at == seg_end);
              }
              // A sequence-parallel rank's first passes (every segment's pieces, the dS
              // walk's from the first segment) tile the whole sequence, each way.
              int at = 0;
              for (int m = 0; m < p.pieces(true); ++m) {
                const walk::chunk_span c = walk::state_piece(m, p.sub_chunks, nt);
                BOOST_TEST_REQUIRE(c.first == at);
                at = c.last;
              }
              BOOST_TEST_REQUIRE(at == nt);
              for (int m = p.pieces(true) - 1; m >= 0; --m) {
                const walk::chunk_span c = walk::dstate_piece(m, p.subs, p.sub_chunks, nt, 0);
                if (c.first == c.last) continue;
                BOOST_TEST_REQUIRE(c.last == at);
                at = c.first;
              }
              BOOST_TEST_REQUIRE(at == 0);
            }
}

// A packed batch's workspace holds kMostPieces, whatever its sequences' lengths: the bf16
// walks', and the fp walks' (fp32's blocks 128 columns; either pieces rule) in the forward
// and in the fp32/fp64 backward's two walks.
BOOST_AUTO_TEST_CASE(no_plan_makes_more_than_the_most_pieces) {
  for (int chunk : kChunks)
    for (const auto [first_slab, walk_slab] : kSlabs)
      for (int heads = 1; heads <= 70; heads += 3)
        for (int64_t T = 1; T <= 200000; T = T * 3 + 1)
          for (int sms : {1, 16, 78, 132, 144, 256})
            for (walk::pieces_rule rule : kRules)
              BOOST_TEST_REQUIRE(
                  walk::plan_launch(1, heads, 128, T, sms, chunk, first_slab, walk_slab, rule)
                      .pieces() <= walk::kMostPieces);
}
