// What the bf16 gradient walk leaves to the WMMA bodies (bf16_mma/strong_features.hpp), on
// the CPU: nothing for gates ≤ 0, strong ones included (the walk rewrites up to
// kRewriteMost strong features' columns a half of K itself); a half of K with more; the whole
// chunk for a gate above 0 or one that is not finite.
#define BOOST_TEST_MODULE strong_features
#include "../bf16_mma/strong_features.hpp"

#include <array>
#include <boost/test/included/unit_test.hpp>
#include <limits>

namespace walk = glabench::chunked::walk;
using cumulative = float[walk::SUB];

namespace {
// Gates `g` at every token, summed in order as the walks' stage 1 sums them.
void fill(cumulative& l, float g, int at = -1, float there = 0.f) {
  float sum = 0.f;
  for (int u = 0; u < walk::SUB; ++u) l[u] = sum += (u == at ? there : g);
}
}  // namespace

BOOST_AUTO_TEST_CASE(gates_at_or_below_0_leave_nothing) {
  cumulative a, b;
  fill(a, 0.f), fill(b, -0.5f);
  BOOST_TEST(walk::walk_grads_listing(a, b) == 0u);
  fill(a, -6.f), fill(b, -1.f, 3, -30.f);  // −96 exactly (k̄ ≤ |k|·2^96 still); a −30 gate
  BOOST_TEST(a[walk::SUB - 1] == -96.f);
  BOOST_TEST(walk::walk_grads_listing(a, b) == 0u);
  cumulative mild, strong;
  fill(mild, -1.f), fill(strong, -6.5f);  // −104 over the sub-chunk: strong, the walk's own
  BOOST_TEST(walk::strong_feature(strong[walk::SUB - 1]));
  BOOST_TEST(walk::walk_grads_listing(strong, mild) == 0u);
  BOOST_TEST(walk::walk_grads_listing(mild, strong) == 0u);
  fill(strong, -1.f, 7, -1e4f);  // one token of −10⁴
  BOOST_TEST(walk::walk_grads_listing(strong, strong) == 0u);
}

BOOST_AUTO_TEST_CASE(a_half_with_more_strong_features_than_the_walk_rewrites_is_left) {
  unsigned mask[walk::KP / 32] = {};
  BOOST_TEST(walk::strong_slabs(mask) == 0u);
  mask[0] = 0x80000001u, mask[1] = 0x00000300u;  // features 0, 31, 40, 41 of the first half
  BOOST_TEST(walk::kRewriteMost == 4);
  BOOST_TEST(walk::strong_slabs(mask) == 0u);
  mask[1] |= 0x40000000u;  // a fifth: feature 62
  BOOST_TEST(walk::strong_slabs(mask) == walk::grads_listing::kSlab0);
  mask[3] = 0xffu;  // eight in the second half
  BOOST_TEST(walk::strong_slabs(mask) ==
             (walk::grads_listing::kSlab0 | walk::grads_listing::kSlab1));
  mask[0] = mask[1] = 0u, mask[2] = 0x1u, mask[3] = 0x7u;  // four in the second half
  BOOST_TEST(walk::strong_slabs(mask) == 0u);
}

BOOST_AUTO_TEST_CASE(a_positive_or_non_finite_gate_leaves_the_whole_chunk) {
  cumulative mild, odd;
  fill(mild, -1.f);
  fill(odd, -1.f, 5, 0.25f);  // a gate above 0
  BOOST_TEST(walk::walk_grads_listing(mild, odd) == walk::grads_listing::kWholeChunk);
  fill(odd, -200.f, 9, 1e-3f);  // above 0 inside a strong feature: whole
  BOOST_TEST(walk::walk_grads_listing(odd, mild) == walk::grads_listing::kWholeChunk);
  fill(odd, -1.f, 2, std::numeric_limits<float>::quiet_NaN());
  BOOST_TEST(walk::walk_grads_listing(mild, odd) == walk::grads_listing::kWholeChunk);
  fill(odd, -1.f, 15, -std::numeric_limits<float>::infinity());
  BOOST_TEST(walk::walk_grads_listing(odd, mild) == walk::grads_listing::kWholeChunk);
}

BOOST_AUTO_TEST_CASE(the_threshold_is_strict) {
  BOOST_TEST(!walk::strong_feature(-walk::kSafeLog2));
  BOOST_TEST(walk::strong_feature(std::nextafter(-walk::kSafeLog2, -1e9f)));
  BOOST_TEST(walk::strong_feature(std::numeric_limits<float>::quiet_NaN()));
}
