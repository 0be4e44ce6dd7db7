// A packed batch's stream order (packed_order.hpp), on the CPU: every sequence runs once,
// on one stream; each stream's first sequence is its longest (its workspace part is sized
// for it); the streams' token counts differ by at most the longest sequence; fewer
// sequences than streams leave the rest empty.
#define BOOST_TEST_MODULE packed_order
#include "../packed_order.hpp"

#include <boost/test/included/unit_test.hpp>
#include <random>

namespace packed = glabench::chunked::packed;

namespace {
std::vector<int64_t> offsets_of(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> at = {0};
  for (const int64_t n : lengths) at.push_back(at.back() + n);
  return at;
}
}  // namespace

BOOST_AUTO_TEST_CASE(each_sequence_once_longest_first_balanced) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + int(rng() % 40), streams = 1 + int(rng() % 8);
    std::vector<int64_t> lengths(n);
    int64_t longest = 0;
    for (int64_t& l : lengths) longest = std::max(longest, l = 1 + int64_t(rng() % 3000));
    const std::vector<int64_t> at = offsets_of(lengths);
    const auto of = packed::stream_order(at, streams);
    BOOST_TEST_REQUIRE(of.size() == size_t(streams));
    std::vector<int> seen(n, 0);
    int64_t most = 0, least = INT64_MAX;
    for (const auto& list : of) {
      int64_t tokens = 0;
      for (size_t k = 0; k < list.size(); ++k) {
        ++seen[list[k]];
        tokens += lengths[list[k]];
        BOOST_TEST(lengths[list[k]] <= lengths[list.front()]);
      }
      most = std::max(most, tokens);
      least = std::min(least, tokens);
    }
    for (const int count : seen) BOOST_TEST_REQUIRE(count == 1);
    if (n >= streams) BOOST_TEST(most - least <= longest);
  }
}

BOOST_AUTO_TEST_CASE(fewer_sequences_than_streams) {
  const auto of = packed::stream_order(offsets_of({300, 7, 64}), 8);
  BOOST_TEST(of[0] == std::vector<int64_t>{0});
  BOOST_TEST(of[1] == std::vector<int64_t>{2});
  BOOST_TEST(of[2] == std::vector<int64_t>{1});
  for (size_t s = 3; s < of.size(); ++s) BOOST_TEST(of[s].empty());
}
