// The recurrent and the parallel (log-space quadratic) formulations are independent
// derivations of the same function: they must agree to rounding, forward and backward.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "edge_cases.hpp"
#include "glabench/reference/ops.hpp"

namespace bdata = boost::unit_test::data;
using namespace glabench;
using namespace glabench::testing;
using reference::formulation;

namespace {

constexpr double kAgreement = 1e-13;

void check_agree(const std::string& what, const tensor& recurrent, const tensor& parallel) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_REQUIRE_EQUAL(recurrent.data.size(), parallel.data.size());
    for (double x : parallel.data) BOOST_REQUIRE(std::isfinite(x));
    BOOST_TEST(rel_l2(parallel, recurrent) <= kAgreement);
  }
}

void check_formulations(op_kind op, const edge_case& c) {
  const problem p = make_problem(op, c);
  random_problem_options opts = c.opts;
  opts.seed = std::hash<std::string>{}(c.name) ^ static_cast<uint64_t>(op);
  const op_inputs in = make_random_inputs(p, opts);

  const op_outputs rec = reference::forward(p, in, formulation::recurrent);
  const op_outputs par = reference::forward(p, in, formulation::parallel);
  check_agree("o", rec.o, par.o);
  check_agree("ht", rec.ht, par.ht);

  op_gradients grec = reference::backward(p, in, formulation::recurrent);
  op_gradients gpar = reference::backward(p, in, formulation::parallel);
  auto a = gradient_tensors(p, in.h0.has_value(), grec);
  auto b = gradient_tensors(p, in.h0.has_value(), gpar);
  for (size_t n = 0; n < a.size(); ++n) check_agree(a[n].name, *a[n].value, *b[n].value);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(formulation_agreement)

BOOST_DATA_TEST_CASE(gla, bdata::make(recurrent_edge_cases()), c) {
  check_formulations(op_kind::gla, c);
}

BOOST_DATA_TEST_CASE(rwkv6, bdata::make(recurrent_edge_cases()), c) {
  check_formulations(op_kind::rwkv6, c);
}

// A long sequence of strong gates: Σg reaches −30·400 = −12000, so exp(Σg) underflows
// and exp(−Σg) overflows. The log-space form must stay finite and still agree.
BOOST_AUTO_TEST_CASE(long_reset_sequence_stays_finite) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6}) {
    edge_case c{"long_reset", 1, 400, 1, 4, 4, {}};
    c.opts.gates = gate_kind::reset;
    check_formulations(op, c);
  }
}

BOOST_AUTO_TEST_SUITE_END()
