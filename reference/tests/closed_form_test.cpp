// Results checkable by hand, so that the two formulations are not merely agreeing
// with each other.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "edge_cases.hpp"
#include "glabench/reference/ops.hpp"

using namespace glabench;
using reference::formulation;

namespace {

// T = 1: one token, so every formula collapses to a few products.
void check_single_token(op_kind op, formulation f) {
  const problem p{op, 1, 1, 1, 3, 2, 0.8, true};
  const op_inputs in = make_random_inputs(p, {});
  const op_outputs out = reference::forward(p, in, f);
  const auto& q = in.q.data;
  const auto& k = in.k.data;
  const auto& v = in.v.data;
  const auto& g = in.g.data;
  const auto& h0 = in.h0->data;
  for (int j = 0; j < 2; ++j) {
    double expected = 0;
    for (int i = 0; i < 3; ++i) {
      const double kv = k[i] * v[j];
      expected += op == op_kind::gla ? q[i] * (std::exp(g[i]) * h0[i * 2 + j] + kv)
                                     : q[i] * (h0[i * 2 + j] + in.u.data[i] * kv);
      BOOST_TEST(out.ht.data[i * 2 + j] == std::exp(g[i]) * h0[i * 2 + j] + kv,
                 boost::test_tools::tolerance(1e-14));
    }
    BOOST_TEST(out.o.data[j] == p.scale * expected, boost::test_tools::tolerance(1e-14));
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(closed_form)

BOOST_AUTO_TEST_CASE(single_token) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6})
    for (formulation f : {formulation::recurrent, formulation::parallel}) check_single_token(op, f);
}

// g = −30 forgets the state at every token: o_t = scale (q_t·k_t) v_t up to e^-30.
BOOST_AUTO_TEST_CASE(reset_gate_keeps_only_the_current_token) {
  const problem p{op_kind::gla, 1, 5, 1, 4, 3, 0.5, true};
  random_problem_options opts;
  opts.gates = gate_kind::reset;
  const op_inputs in = make_random_inputs(p, opts);
  const op_outputs out = reference::forward(p, in, formulation::recurrent);
  for (int t = 0; t < 5; ++t) {
    double qk = 0;
    for (int i = 0; i < 4; ++i) qk += in.q.data[t * 4 + i] * in.k.data[t * 4 + i];
    for (int j = 0; j < 3; ++j)
      BOOST_TEST(std::abs(out.o.data[t * 3 + j] - p.scale * qk * in.v.data[t * 3 + j]) < 1e-11);
  }
}

// Causal softmax: the first query sees only the first key, so o_0 = v_0 and
// lse_0 = scale q_0·k_0; non-causal with identical keys averages the values.
BOOST_AUTO_TEST_CASE(softmax_first_row_and_uniform_keys) {
  const problem p{op_kind::softmax_attn, 1, 4, 1, 3, 2, 0.9, true};
  op_inputs in = make_random_inputs(p, {});
  op_outputs out = reference::softmax_attn_forward(p, in);
  double qk = 0;
  for (int i = 0; i < 3; ++i) qk += in.q.data[i] * in.k.data[i];
  BOOST_TEST(out.lse.data[0] == p.scale * qk, boost::test_tools::tolerance(1e-14));
  for (int j = 0; j < 2; ++j)
    BOOST_TEST(out.o.data[j] == in.v.data[j], boost::test_tools::tolerance(1e-14));

  problem nc = p;
  nc.causal = false;
  for (int t = 1; t < 4; ++t)
    for (int i = 0; i < 3; ++i) in.k.data[t * 3 + i] = in.k.data[i];
  out = reference::softmax_attn_forward(nc, in);
  for (int j = 0; j < 2; ++j) {
    double mean = 0;
    for (int t = 0; t < 4; ++t) mean += in.v.data[t * 2 + j] / 4;
    for (int t = 0; t < 4; ++t)
      BOOST_TEST(out.o.data[t * 2 + j] == mean, boost::test_tools::tolerance(1e-13));
  }
}

BOOST_AUTO_TEST_SUITE_END()
