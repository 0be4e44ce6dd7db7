// The named shape sets of `glabench bench --shapes` and the --shape parser.
#include "bench_shapes.hpp"

#include <boost/test/unit_test.hpp>
#include <stdexcept>
#include <string>

using namespace glabench;

BOOST_AUTO_TEST_SUITE(bench_shapes)

BOOST_AUTO_TEST_CASE(decode_is_one_token_at_three_batch_sizes) {
  const auto set = shape_set("decode");
  BOOST_REQUIRE_EQUAL(set.size(), 3u);
  const int64_t batches[] = {1, 64, 256};
  for (size_t i = 0; i < set.size(); ++i) {
    BOOST_TEST(set[i].B == batches[i]);
    BOOST_TEST(set[i].T == 1);
    BOOST_TEST(set[i].H == 16);
    BOOST_TEST(set[i].K == 128);
    BOOST_TEST(set[i].V == 128);
  }
}

BOOST_AUTO_TEST_CASE(every_named_set_is_in_range) {
  for (const char* name : {"seed", "fla", "t-sweep", "decode", "packed"}) {
    BOOST_TEST_CONTEXT(name) {
      const auto set = shape_set(name);
      BOOST_TEST(!set.empty());
      for (const auto& s : set) BOOST_TEST(shape_in_range(s));
    }
  }
}

BOOST_AUTO_TEST_CASE(an_unknown_set_names_the_sets) {
  try {
    shape_set("prefill");
    BOOST_FAIL("no error");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()) ==
               "--shapes 'prefill' is not one of seed, fla, t-sweep, decode, packed");
  }
}

BOOST_AUTO_TEST_CASE(the_packed_set_is_one_row_whose_lengths_sum_to_T) {
  for (const auto& s : shape_set("packed")) {
    BOOST_TEST(s.B == 1);
    BOOST_TEST(s.seqlens.size() == 16u);
    int64_t sum = 0;
    for (const int64_t n : s.seqlens) {
      BOOST_TEST(n >= 1);
      sum += n;
    }
    BOOST_TEST(sum == s.T);
  }
}

BOOST_AUTO_TEST_CASE(parse_shape_takes_a_packed_batch_whose_lengths_sum_to_T) {
  const bench_shape s = parse_shape("1,100,2,16,16:1+64+35");
  BOOST_TEST(s.B == 1);
  BOOST_TEST(s.T == 100);
  BOOST_TEST((s.seqlens == std::vector<int64_t>{1, 64, 35}));
  BOOST_TEST(parse_shape("2,100,2,16,16").seqlens.empty());
  BOOST_CHECK_THROW(parse_shape("1,100,2,16,16:1+64+34"), std::invalid_argument);  // sum 99
  BOOST_CHECK_THROW(parse_shape("2,100,2,16,16:50+50"), std::invalid_argument);    // B 2
  BOOST_CHECK_THROW(parse_shape("1,100,2,16,16:50+0+50"), std::invalid_argument);  // a 0
  BOOST_CHECK_THROW(parse_shape("1,100,2,16,16:"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_shape("1,100,2,16,16:100+9223372036854775807"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(parse_shape_takes_five_positive_integers) {
  const bench_shape s = parse_shape("64,1,16,128,128");
  BOOST_TEST(s.B == 64);
  BOOST_TEST(s.T == 1);
  BOOST_CHECK_THROW(parse_shape("64,1,16,128"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_shape("64,0,16,128,128"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_shape("64,1,16,128,x"), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
