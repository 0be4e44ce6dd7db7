// The bench's check of the last timed call's outputs against the quick verify's
// (timed_outputs.hpp): identical passes, NaN fails, a difference within the threshold
// passes as not identical, beyond it fails, naming the tensor.
#include "timed_outputs.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

using namespace glabench;

namespace {

output_snapshot snapshot(const std::vector<double>& o, dtype d = dtype::fp32) {
  tensor t({int64_t(o.size())});
  t.data = o;
  return {{{"o", d, t.shape, pack(t, d)}}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(timed_outputs)

BOOST_AUTO_TEST_CASE(identical_outputs_pass) {
  const auto a = snapshot({1, -2, 3.5});
  const timed_outputs_check c = check_timed_outputs(a, a, 1e-5);
  BOOST_TEST(c.identical);
  BOOST_TEST(c.max_rel_l2 == 0.0);
  BOOST_TEST(c.failure.empty());
}

BOOST_AUTO_TEST_CASE(a_nan_fails_even_where_both_hold_it) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto verified = snapshot({1, 2, 3}), timed = snapshot({1, nan, 3});
  timed_outputs_check c = check_timed_outputs(verified, timed, 1e-5);
  BOOST_TEST(!c.identical);
  BOOST_TEST(c.failure.find("o holds 1 NaN or Inf") != std::string::npos, c.failure);
  c = check_timed_outputs(timed, timed, 1e-5);  // the quick verify's unsampled heads
  BOOST_TEST(!c.failure.empty());
}

BOOST_AUTO_TEST_CASE(a_difference_within_the_threshold_passes_beyond_it_fails) {
  const auto verified = snapshot({1, 2, 3});
  timed_outputs_check c = check_timed_outputs(verified, snapshot({1, 2, 3.00001}), 1e-5);
  BOOST_TEST(!c.identical);
  BOOST_TEST(c.max_rel_l2 > 0);
  BOOST_TEST(c.failure.empty(), c.failure);
  c = check_timed_outputs(verified, snapshot({1, 2, 3.1}), 1e-5);
  BOOST_TEST(c.failure.find("o differs from the quick verify's") != std::string::npos, c.failure);
}

BOOST_AUTO_TEST_CASE(another_set_of_tensors_fails) {
  output_snapshot two = snapshot({1, 2});
  two.tensors.push_back(two.tensors[0]);
  two.tensors[1].name = "ht";
  BOOST_TEST(!check_timed_outputs(snapshot({1, 2}), two, 1e-5).failure.empty());
  BOOST_TEST(!check_timed_outputs(two, snapshot({1, 2}), 1e-5).failure.empty());
}

BOOST_AUTO_TEST_CASE(non_finite_counted_from_the_bits_in_every_dtype) {
  const double inf = std::numeric_limits<double>::infinity(),
               nan = std::numeric_limits<double>::quiet_NaN();
  tensor t({5});
  t.data = {1, -inf, nan, 65504, -0.0};
  for (dtype d : {dtype::fp64, dtype::fp32, dtype::bf16, dtype::fp16})
    BOOST_TEST(count_non_finite(pack(t, d), d) == 2u, dtype_name(d));
  // The bench's poison: all-ones bytes are NaN in every dtype.
  for (dtype d : {dtype::fp64, dtype::fp32, dtype::bf16, dtype::fp16})
    BOOST_TEST(count_non_finite(std::vector<std::byte>(8 * dtype_bytes(d), std::byte{0xFF}), d) ==
               8u);
}

BOOST_AUTO_TEST_SUITE_END()
