// The analytic backward of every op and formulation against finite differences:
// the full Jacobian on tiny shapes, random directions on the edge cases.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "edge_cases.hpp"
#include "glabench/reference/gradcheck.hpp"
#include "glabench/reference/ops.hpp"

namespace bdata = boost::unit_test::data;
using namespace glabench;
using namespace glabench::testing;
using reference::formulation;

namespace {

reference::gradcheck_report run_check(const problem& p, const random_problem_options& opts,
                                      formulation f, int64_t max_jacobian) {
  const op_inputs in = make_random_inputs(p, opts);
  reference::gradcheck_options gopts;
  gopts.max_jacobian_elements = max_jacobian;
  return reference::gradcheck(p, in, reference::reference_op(p, f), gopts);
}

void require_passed(const reference::gradcheck_report& r, bool want_jacobian) {
  for (const auto& d : r.directional)
    BOOST_TEST_CONTEXT("direction on " << d.input << ": fd " << d.finite_difference << " analytic "
                                       << d.analytic) {
      BOOST_TEST(d.error <= 1e-8);
    }
  BOOST_TEST(r.jacobian_checked == want_jacobian);
  if (want_jacobian) BOOST_TEST(r.jacobian_error <= 1e-8);
  BOOST_TEST(r.passed);
}

const formulation kBoth[] = {formulation::recurrent, formulation::parallel};

}  // namespace

BOOST_AUTO_TEST_SUITE(gradient_check)

BOOST_AUTO_TEST_CASE(full_jacobian_tiny_gla_and_rwkv6) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6})
    for (formulation f : kBoth)
      for (bool h0 : {true, false}) {
        const problem p{op, 1, 3, 1, 2, 3, 0.7, true};
        random_problem_options opts;
        opts.with_h0 = h0;
        opts.seed = 7;
        BOOST_TEST_CONTEXT(op_name(op) << (f == formulation::parallel ? " parallel" : " recurrent")
                                       << (h0 ? " with h0" : " without h0")) {
          require_passed(run_check(p, opts, f, 1 << 20), true);
        }
      }
}

BOOST_AUTO_TEST_CASE(full_jacobian_tiny_softmax) {
  for (bool causal : {true, false}) {
    const problem p{op_kind::softmax_attn, 1, 4, 1, 3, 2, 0.6, causal};
    BOOST_TEST_CONTEXT((causal ? "causal" : "non-causal")) {
      require_passed(run_check(p, {}, formulation::recurrent, 1 << 20), true);
    }
  }
}

BOOST_DATA_TEST_CASE(directional_gla, bdata::make(recurrent_edge_cases()), c) {
  for (formulation f : kBoth)
    require_passed(run_check(make_problem(op_kind::gla, c), c.opts, f, 0), false);
}

BOOST_DATA_TEST_CASE(directional_rwkv6, bdata::make(recurrent_edge_cases()), c) {
  for (formulation f : kBoth)
    require_passed(run_check(make_problem(op_kind::rwkv6, c), c.opts, f, 0), false);
}

BOOST_AUTO_TEST_CASE(directional_softmax) {
  for (bool causal : {true, false})
    for (int64_t T : {1, 9, 16}) {
      const problem p{op_kind::softmax_attn, 2, T, 2, 8, 6, 0.35, causal};
      require_passed(run_check(p, {}, formulation::recurrent, 0), false);
    }
}

// The checker must not be vacuous: a gradient that is wrong by 1e-4 of one element
// is caught.
BOOST_AUTO_TEST_CASE(detects_a_slightly_wrong_gradient) {
  const problem p{op_kind::gla, 1, 6, 1, 3, 3, 0.5, true};
  const op_inputs in = make_random_inputs(p, {});
  reference::differentiable_op op = reference::reference_op(p, formulation::recurrent);
  auto correct_backward = op.backward;
  op.backward = [correct_backward](const op_inputs& x) {
    op_gradients g = correct_backward(x);
    g.dg.data[4] += 1e-4 * std::abs(g.dg.data[4]) + 1e-6;
    return g;
  };
  const auto report = reference::gradcheck(p, in, op);
  BOOST_TEST(!report.passed);
  BOOST_TEST(report.worst_error > 1e-7);
}

BOOST_AUTO_TEST_SUITE_END()
