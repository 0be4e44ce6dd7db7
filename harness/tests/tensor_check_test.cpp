#include "tensor_check.hpp"

#include <boost/test/unit_test.hpp>

using namespace glabench;

BOOST_AUTO_TEST_SUITE(tensor_check_rules)

tensor of(std::vector<double> values) {
  tensor t({static_cast<int64_t>(values.size())});
  t.data = std::move(values);
  return t;
}

// A gradient of 1e-13 (a feature whose gate is −30) becomes 0 in fp16: the best a backend
// can return there. Without the dtype it fails; with it the underflow is credited.
BOOST_AUTO_TEST_CASE(fp16_underflow_is_credited) {
  const tensor want = of({1e-13, -2e-13, 5e-14}), zero = of({0, 0, 0});
  BOOST_TEST(!compare_tensor("dg", zero, want, 5e-3).passed);
  const tensor_check c = compare_tensor("dg", zero, want, 5e-3, dtype::fp16);
  BOOST_TEST(c.passed);
  BOOST_TEST(c.rel_l2 == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(c.underflow == 1.0, boost::test_tools::tolerance(1e-12));
  // bf16 holds 1e-13 to 8 bits: no credit, the zero fails.
  BOOST_TEST(!compare_tensor("dg", zero, want, 1e-2, dtype::bf16).passed);
}

// The credit is the rounding of the underflowing elements only: a result off by more than
// that, or wrong in the normal range, still fails.
BOOST_AUTO_TEST_CASE(the_credit_covers_only_what_the_dtype_cannot_hold) {
  const tensor want = of({1.0, 2.0, 1e-13});
  BOOST_TEST(compare_tensor("o", of({1.0, 2.0, 0.0}), want, 5e-3, dtype::fp16).passed);
  BOOST_TEST(!compare_tensor("o", of({1.0, 2.1, 0.0}), want, 5e-3, dtype::fp16).passed);
  BOOST_TEST(
      !compare_tensor("o", of({1e-13, 1e-13, 1e-2}), of({1e-13, 1e-13, 0}), 5e-3, dtype::fp16)
           .passed);
  const tensor_check c = compare_tensor("o", of({1.0, 2.0, 0.0}), want, 5e-3, dtype::fp16);
  BOOST_TEST(c.underflow > 0);
  BOOST_TEST(c.underflow < 1e-13);
}

// The credit is per element: a wrong value in the normal range cannot spend the norm of
// the elements that underflow. a = 7e-5 (normal in fp16) beside 10000 elements of 2.5e-8
// (0 in fp16, 3.6 % of a's norm together): a 3 % error in a fails, a's own rounding passes.
BOOST_AUTO_TEST_CASE(the_underflow_credit_is_not_spent_elsewhere) {
  std::vector<double> want(10001, 2.5e-8), wrong(10001, 0.0), right(10001, 0.0);
  want[0] = 7e-5;
  wrong[0] = 7e-5 * 1.03;
  right[0] = round_value(7e-5, dtype::fp16);
  const tensor_check bad = compare_tensor("dg", of(wrong), of(want), 5e-3, dtype::fp16);
  BOOST_TEST(bad.underflow > 0.03);
  BOOST_TEST(!bad.passed);
  BOOST_TEST(compare_tensor("dg", of(right), of(want), 5e-3, dtype::fp16).passed);
}

BOOST_AUTO_TEST_CASE(output_dtypes_name_each_tensor) {
  const output_dtypes at16{dtype::fp16, dtype::fp32}, at64{dtype::fp64, dtype::fp64};
  BOOST_TEST((at16.of("o") == dtype::fp16));
  BOOST_TEST((at16.of("dg") == dtype::fp16));
  BOOST_TEST((at16.of("ht") == dtype::fp32));
  BOOST_TEST((at16.of("dh0") == dtype::fp32));
  BOOST_TEST((at16.of("lse") == dtype::fp32));
  BOOST_TEST((at64.of("lse") == dtype::fp64));
}

BOOST_AUTO_TEST_SUITE_END()
