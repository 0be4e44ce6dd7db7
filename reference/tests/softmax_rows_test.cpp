// softmax_attn on chosen rows of one head equals those rows of the whole-head reference:
// o, lse and dq on query rows, dk and dv on key rows, causal and full.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <stdexcept>

#include "glabench/reference/ops.hpp"
#include "glabench/reference/random_inputs.hpp"
#include "glabench/reference/softmax_attn_rows.hpp"

namespace bdata = boost::unit_test::data;
using namespace glabench;

namespace {

constexpr double kSame = 1e-12;

// Row `row` (X values) of head (b, h) of a [B, T, H, X] tensor.
const double* token_row(const problem& p, const tensor& t, int64_t b, int64_t row, int64_t h) {
  const int64_t X = t.shape[3];
  return t.ptr() + ((b * p.T + row) * p.H + h) * X;
}

// `got` [rows, X] against those rows of head (b, h) of the whole tensor `whole`.
void check_rows(const std::string& name, const problem& p, const tensor& got, const tensor& whole,
                int64_t b, int64_t h, const std::vector<int64_t>& rows) {
  const int64_t X = whole.shape[3];
  BOOST_REQUIRE_EQUAL(got.numel(), int64_t(rows.size()) * X);
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t x = 0; x < X; ++x) {
      const double want = token_row(p, whole, b, rows[r], h)[x];
      const double have = got.ptr()[r * X + x];
      BOOST_TEST_CONTEXT(name << " row " << rows[r] << " [" << x << "]") {
        BOOST_TEST(std::isfinite(have));
        BOOST_TEST(std::abs(have - want) <= kSame * (1 + std::abs(want)));
      }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(softmax_rows)

BOOST_DATA_TEST_CASE(rows_equal_the_whole_heads_rows, bdata::make({true, false}), causal) {
  const problem p{op_kind::softmax_attn, 2, 64, 3, 8, 6, 1.0 / std::sqrt(8.0), causal};
  random_problem_options ro;
  ro.seed = 7;
  const op_inputs in = make_random_inputs(p, ro);
  const op_outputs fwd = reference::softmax_attn_forward(p, in);
  const op_gradients grad = reference::softmax_attn_backward(p, in);
  const int64_t b = 1, h = 2;
  // Unsorted with a repeat: the result's rows are sorted and distinct.
  const reference::softmax_rows r =
      reference::softmax_attn_rows(p, in, b, h, {63, 0, 5, 31, 5}, {63, 40, 0, 50, 62}, true);
  const std::vector<int64_t> queries = {0, 5, 31, 63}, keys = {0, 40, 50, 62, 63};
  BOOST_TEST(r.queries == queries, boost::test_tools::per_element());
  BOOST_TEST(r.keys == keys, boost::test_tools::per_element());

  check_rows("o", p, r.o, fwd.o, b, h, queries);
  check_rows("dq", p, r.dq, grad.dq, b, h, queries);
  check_rows("dk", p, r.dk, grad.dk, b, h, keys);
  check_rows("dv", p, r.dv, grad.dv, b, h, keys);
  BOOST_REQUIRE_EQUAL(r.lse.numel(), int64_t(queries.size()));
  for (size_t a = 0; a < queries.size(); ++a)
    BOOST_TEST(r.lse.ptr()[a] == fwd.lse.ptr()[(b * p.H + h) * p.T + queries[a]],
               boost::test_tools::tolerance(kSame));
  // The checks compare real values: no gradient row here is zero (key 0, seen by every
  // query when full and by all but none when causal, included).
  for (const tensor* t : {&r.dq, &r.dk, &r.dv}) {
    double norm = 0;
    for (double x : t->data) norm += x * x;
    BOOST_TEST(norm > 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(forward_only_and_bad_rows) {
  const problem p{op_kind::softmax_attn, 1, 16, 1, 4, 4, 0.5, true};
  const op_inputs in = make_random_inputs(p, {});
  const reference::softmax_rows r = reference::softmax_attn_rows(p, in, 0, 0, {3}, {15}, false);
  BOOST_TEST(r.o.numel() == 4);
  BOOST_TEST(r.dq.empty());
  BOOST_TEST(r.dk.empty());
  BOOST_CHECK_THROW(reference::softmax_attn_rows(p, in, 0, 0, {16}, {}, false), std::out_of_range);
  BOOST_CHECK_THROW(reference::softmax_attn_rows(p, in, 0, 0, {0}, {-1}, true), std::out_of_range);
}

BOOST_AUTO_TEST_SUITE_END()
