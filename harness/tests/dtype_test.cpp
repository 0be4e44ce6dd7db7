#include "dtype.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "abi_vocabulary.hpp"

using namespace glabench;

BOOST_AUTO_TEST_SUITE(dtype_conversion)

BOOST_AUTO_TEST_CASE(names_round_trip) {
  for (dtype d : kAllDtypes) {
    BOOST_TEST((parse_dtype(dtype_name(d)).value() == d));
    BOOST_TEST((from_dlpack(to_dlpack(d)).value() == d));
  }
  BOOST_TEST(!parse_dtype("fp8").has_value());
}

BOOST_AUTO_TEST_CASE(exactly_representable_values_survive) {
  const tensor t({6}, 0.0);
  tensor x = t;
  x.data = {1.0, -2.5, 0.15625, 1024.0, -0.0, 3.0};
  for (dtype d : kAllDtypes)
    BOOST_TEST(round_to(x, d).data == x.data, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(rounding_is_to_nearest_even) {
  tensor x({3});
  // bf16 keeps 8 significant bits: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> even (1).
  x.data = {1.0 + std::ldexp(1.0, -8), 1.0 + 3 * std::ldexp(1.0, -8), 1.0 / 3.0};
  const tensor b = round_to(x, dtype::bf16);
  BOOST_TEST(b.data[0] == 1.0);
  BOOST_TEST(b.data[1] == 1.0 + std::ldexp(1.0, -6));  // tie -> even mantissa
  BOOST_TEST(std::abs(b.data[2] - 1.0 / 3.0) <= std::ldexp(1.0, -9));
  // fp16 keeps 11 significant bits.
  const tensor h = round_to(x, dtype::fp16);
  BOOST_TEST(h.data[0] == 1.0 + std::ldexp(1.0, -8));
  BOOST_TEST(std::abs(h.data[2] - 1.0 / 3.0) <= std::ldexp(1.0, -12));
}

BOOST_AUTO_TEST_CASE(fp16_range_and_nan) {
  tensor x({4});
  x.data = {70000.0, std::ldexp(1.0, -24), std::numeric_limits<double>::quiet_NaN(),
            -std::ldexp(1.0, -20)};
  const tensor h = round_to(x, dtype::fp16);
  BOOST_TEST(std::isinf(h.data[0]));
  BOOST_TEST(h.data[1] == std::ldexp(1.0, -24));  // smallest subnormal
  BOOST_TEST(std::isnan(h.data[2]));
  BOOST_TEST(h.data[3] == -std::ldexp(1.0, -20));
  BOOST_TEST(std::isnan(round_to(x, dtype::bf16).data[2]));
}

BOOST_AUTO_TEST_SUITE_END()
