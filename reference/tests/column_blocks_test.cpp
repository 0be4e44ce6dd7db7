// gla's recurrence splits a long head of a problem with few heads into blocks of the
// state's columns (gla_recurrent.cpp). The same head as one row of eight, which runs
// whole, must give the same outputs and gradients: the forward bit for bit (columns never
// meet), the backward to rounding (dq, dk and dg are summed block by block).
#include <boost/test/unit_test.hpp>

#include "edge_cases.hpp"
#include "glabench/reference/ops.hpp"

using namespace glabench;
using namespace glabench::testing;

namespace {

// Row 0 of a [B, …] tensor.
tensor first_row(const tensor& t) {
  std::vector<int64_t> shape = t.shape;
  shape[0] = 1;
  tensor out(shape);
  std::copy_n(t.ptr(), out.numel(), out.ptr());
  return out;
}

// `t` ([1, …]) repeated as `rows` rows.
tensor repeated(const tensor& t, int64_t rows) {
  std::vector<int64_t> shape = t.shape;
  shape[0] = rows;
  tensor out(shape);
  for (int64_t r = 0; r < rows; ++r) std::copy_n(t.ptr(), t.numel(), out.ptr() + r * t.numel());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(column_blocks)

BOOST_AUTO_TEST_CASE(a_long_head_in_blocks_equals_it_whole) {
  // T·K·V = 2^28: the smallest problem that splits (into 8 blocks of 32 columns).
  problem one;
  one.op = op_kind::gla;
  one.T = 16384, one.K = 64, one.V = 256, one.scale = 0.125;
  random_problem_options opts;
  opts.seed = 2026112801;
  opts.gates = gate_kind::strong;
  const op_inputs in = make_random_inputs(one, opts);
  problem eight = one;
  eight.B = 8;
  op_inputs rows = in;
  for (tensor* t : {&rows.q, &rows.k, &rows.v, &rows.g, &*rows.h0, &*rows.d_o, &*rows.dht})
    *t = repeated(*t, 8);

  const op_outputs split = reference::forward(one, in), whole = reference::forward(eight, rows);
  BOOST_TEST((split.o.data == first_row(whole.o).data));
  BOOST_TEST((split.ht.data == first_row(whole.ht).data));

  const op_gradients gs = reference::backward(one, in), gw = reference::backward(eight, rows);
  // A column's own gradients: bit for bit.
  BOOST_TEST((gs.dv.data == first_row(gw.dv).data));
  BOOST_TEST((gs.dh0.data == first_row(gw.dh0).data));
  // Sums over the columns: to rounding, and not bit for bit, which shows the blocks split.
  for (auto [name, a, b] : {std::tuple{"dq", &gs.dq, &gw.dq}, std::tuple{"dk", &gs.dk, &gw.dk},
                            std::tuple{"dg", &gs.dg, &gw.dg}})
    BOOST_TEST_CONTEXT(name) {
      const double d = rel_l2(*a, first_row(*b));
      BOOST_TEST(d <= 1e-14);
      BOOST_TEST(d > 0);
    }
}

BOOST_AUTO_TEST_SUITE_END()
