// The ring's schedule (ring_plan.hpp), on the CPU: shards cover the sequence once, zigzag
// shards hold chunks r and 2N−1−r, every visible (query, key) pair is computed exactly
// once, the causal work per shard is balanced under zigzag, and every query chunk meets
// its own chunk at step 0.
#define BOOST_TEST_MODULE ring_plan
#include "../ring_plan.hpp"

#include <boost/test/included/unit_test.hpp>
#include <map>
#include <set>

namespace ring = glabench::ring;

BOOST_AUTO_TEST_CASE(split_is_even_and_covers) {
  for (int64_t T : {1, 7, 64, 257, 1000})
    for (int n = 1; n <= 9; ++n) {
      if (n > T) continue;
      const auto c = ring::split_even(T, n);
      BOOST_TEST(c.front().begin == 0);
      BOOST_TEST(c.back().end == T);
      for (size_t i = 0; i < c.size(); ++i) {
        BOOST_TEST((c[i].size() == T / n || c[i].size() == T / n + 1));
        if (i) BOOST_TEST(c[i].begin == c[i - 1].end);
      }
    }
  BOOST_CHECK_THROW(ring::split_even(0, 2), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(zigzag_holds_r_and_mirror) {
  const auto s = ring::shard_chunks(80, 4, ring::layout::zigzag);  // 8 chunks of 10
  for (int r = 0; r < 4; ++r) {
    BOOST_TEST_REQUIRE(s[r].size() == 2u);
    BOOST_TEST(s[r][0].begin == 10 * r);
    BOOST_TEST(s[r][1].begin == 10 * (7 - r));
  }
}

// Every (query token, key token) pair that the mask allows is inside exactly one
// computed block, and no computed block holds a pair the mask forbids except on a
// causal diagonal (where the kernel masks it).
BOOST_AUTO_TEST_CASE(every_visible_pair_once) {
  for (const ring::layout l : {ring::layout::ring, ring::layout::zigzag})
    for (const bool causal : {false, true})
      for (int64_t T : {1, 5, 17, 40})
        for (int n = 1; n <= 8; ++n) {
          std::map<std::pair<int64_t, int64_t>, int> seen;
          const auto plan = ring::ring_schedule(T, n, l, causal);
          for (const auto& bp : plan) {
            BOOST_TEST((bp.mask != ring::pair_mask::causal_diagonal || bp.q == bp.kv));
            for (int64_t i = bp.q.begin; i < bp.q.end; ++i)
              for (int64_t j = bp.kv.begin; j < bp.kv.end; ++j) {
                const bool visible = !causal || j <= i;
                if (bp.mask == ring::pair_mask::full) BOOST_TEST_REQUIRE(visible);
                if (visible) ++seen[{i, j}];
              }
          }
          size_t expected = 0;
          for (int64_t i = 0; i < T; ++i) expected += causal ? size_t(i + 1) : size_t(T);
          BOOST_TEST(seen.size() == expected);
          for (const auto& [pair, count] : seen) BOOST_TEST_REQUIRE(count == 1);
        }
}

// A packed batch's plan on cuDNN: every (query, key) pair of the same sequence that the
// mask lets through exactly once, and none across sequences.
BOOST_AUTO_TEST_CASE(packed_pairs_stay_in_their_sequence) {
  const std::vector<int64_t> offsets = {0, 1, 16, 17, 80, 81};
  for (const bool causal : {false, true}) {
    std::map<std::pair<int64_t, int64_t>, int> seen;
    const auto plan = ring::packed_schedule(offsets, causal);
    BOOST_TEST(plan.size() == offsets.size() - 1);
    for (const auto& bp : plan) {
      BOOST_TEST((bp.q == bp.kv));
      BOOST_TEST((bp.mask == (causal ? ring::pair_mask::causal_diagonal : ring::pair_mask::full)));
      for (int64_t i = bp.q.begin; i < bp.q.end; ++i)
        for (int64_t j = bp.kv.begin; j < bp.kv.end; ++j)
          if (!causal || j <= i) ++seen[{i, j}];
    }
    size_t expected = 0;
    for (size_t n = 0; n + 1 < offsets.size(); ++n) {
      const size_t len = size_t(offsets[n + 1] - offsets[n]);
      expected += causal ? len * (len + 1) / 2 : len * len;
    }
    BOOST_TEST(seen.size() == expected);
    for (const auto& [pair, count] : seen) BOOST_TEST_REQUIRE(count == 1);
  }
}

BOOST_AUTO_TEST_CASE(own_chunk_first_at_step_zero) {
  for (const ring::layout l : {ring::layout::ring, ring::layout::zigzag})
    for (int n = 1; n <= 8; ++n) {
      std::set<int64_t> met_self;
      for (const auto& bp : ring::ring_schedule(1000, n, l, true)) {
        if (bp.q == bp.kv) {
          BOOST_TEST(bp.step == 0);
          met_self.insert(bp.q.begin);
        }
        BOOST_TEST(bp.kv_shard == ring::kv_source(bp.q_shard, bp.step, n));
      }
      BOOST_TEST(met_self.size() == size_t(l == ring::layout::ring ? n : 2 * n));
    }
}

// Causal token pairs per shard: zigzag gives every shard the same work (to a chunk's
// rounding), plain ring gives the last shard about 2N−1 times the first's.
BOOST_AUTO_TEST_CASE(zigzag_balances_causal_work) {
  const int n = 8;
  const int64_t T = 16 * 1024;
  for (const ring::layout l : {ring::layout::ring, ring::layout::zigzag}) {
    std::vector<double> work(n, 0);
    for (const auto& bp : ring::ring_schedule(T, n, l, true))
      work[bp.q_shard] += bp.mask == ring::pair_mask::full
                              ? double(bp.q.size()) * bp.kv.size()
                              : double(bp.q.size()) * (bp.q.size() + 1) / 2;
    const double lo = *std::min_element(work.begin(), work.end()),
                 hi = *std::max_element(work.begin(), work.end());
    if (l == ring::layout::zigzag)
      BOOST_TEST(hi / lo < 1.01);
    else
      BOOST_TEST(hi / lo > 10.0);
  }
}

// Across ranks, one block per rank and step (rank_step) on local rows: mapped back to
// the sequence, every visible (query, key) pair is computed exactly once, a full block
// holds no masked pair, and step 0 covers every row of the shard. Ragged T included.
BOOST_AUTO_TEST_CASE(rank_steps_cover_every_visible_pair_once) {
  for (const ring::layout l : {ring::layout::ring, ring::layout::zigzag})
    for (const bool causal : {false, true})
      for (int64_t T : {1, 5, 17, 40, 131})
        for (int n = 2; n <= 8; ++n) {
          const auto chunks = ring::shard_chunks(T, n, l);
          // Local row → sequence position, per shard.
          std::vector<std::vector<int64_t>> position(n);
          for (int r = 0; r < n; ++r)
            for (const ring::span& c : chunks[r])
              for (int64_t t = c.begin; t < c.end; ++t) position[r].push_back(t);
          std::vector<int> seen(size_t(T * T), 0);
          for (int r = 0; r < n; ++r)
            for (int s = 0; s < n; ++s) {
              const auto blk = ring::rank_step(chunks, r, s, causal);
              if (s == 0 && !position[r].empty()) {
                BOOST_TEST_REQUIRE(blk.has_value());
                BOOST_TEST((blk->q == ring::span{0, int64_t(position[r].size())}));
              }
              if (!blk) continue;
              const auto& kv_pos = position[ring::kv_source(r, s, n)];
              BOOST_TEST_REQUIRE(blk->q.end <= int64_t(position[r].size()));
              BOOST_TEST_REQUIRE(blk->kv.end <= int64_t(kv_pos.size()));
              for (int64_t i = blk->q.begin; i < blk->q.end; ++i)
                for (int64_t j = blk->kv.begin; j < blk->kv.end; ++j) {
                  if (blk->mask == ring::pair_mask::causal_diagonal && j > i) continue;
                  const int64_t qi = position[r][size_t(i)], kj = kv_pos[size_t(j)];
                  BOOST_TEST_REQUIRE((!causal || kj <= qi));
                  ++seen[size_t(qi * T + kj)];
                }
            }
          for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < T; ++j)
              BOOST_TEST_REQUIRE(seen[size_t(i * T + j)] == (!causal || j <= i ? 1 : 0));
        }
}

// Zigzag's step blocks under a causal mask: after step 0, each is the half-by-whole
// rectangle of ring-flash-attention, and every rank does the same work per step.
BOOST_AUTO_TEST_CASE(zigzag_steps_are_half_rectangles) {
  const int n = 4;
  const auto chunks = ring::shard_chunks(8 * 100, n, ring::layout::zigzag);
  for (int r = 0; r < n; ++r)
    for (int s = 1; s < n; ++s) {
      const auto blk = ring::rank_step(chunks, r, s, true);
      BOOST_TEST_REQUIRE(blk.has_value());
      BOOST_TEST((blk->mask == ring::pair_mask::full));
      BOOST_TEST(blk->q.size() * blk->kv.size() == 100 * 200);
      const bool earlier = ring::kv_source(r, s, n) < r;
      BOOST_TEST((earlier ? blk->kv == ring::span{0, 100} : blk->q == ring::span{100, 200}));
    }
}
