// Packed variable-length batches (problem::cu_seqlens): the reference runs each sequence
// as a problem of its own, from its own h0[n] into its own ht[n], softmax_attn attending
// within it, du summed over the sequences; the finite-difference checker and both gla and
// rwkv6 formulations agree with it.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <stdexcept>

#include "edge_cases.hpp"
#include "glabench/reference/gradcheck.hpp"
#include "glabench/reference/ops.hpp"

using namespace glabench;
using namespace glabench::testing;
using reference::formulation;

namespace {

// Five sequences, one token long at each end: 1, 4, 7, 1, 7 tokens.
const std::vector<int64_t> kOffsets = {0, 1, 5, 12, 13, 20};

problem varlen_problem(op_kind op, bool causal = true, std::vector<int64_t> cu = kOffsets,
                       int64_t H = 2, int64_t K = 4, int64_t V = 3) {
  problem p{op, 1, cu.back(), H, K, V, 1.0 / std::sqrt(static_cast<double>(K)), causal};
  p.cu_seqlens = std::move(cu);
  return p;
}

op_inputs varlen_inputs(const problem& p, uint64_t seed = 11, bool h0 = true, bool dht = true) {
  random_problem_options opts;
  opts.seed = seed;
  opts.with_h0 = h0;
  opts.with_dht = dht;
  return make_random_inputs(p, opts);
}

// Written here apart from the reference's own splitting: tokens [b, e) of a [1,T,H,D]
// tensor, and state n of an [N,H,K,V] one.
tensor tokens(const tensor& t, int64_t b, int64_t e) {
  const int64_t row = t.shape[2] * t.shape[3];
  tensor out({1, e - b, t.shape[2], t.shape[3]});
  for (int64_t i = 0; i < (e - b) * row; ++i) out.data[i] = t.data[b * row + i];
  return out;
}
tensor state(const tensor& t, int64_t n) {
  const int64_t size = t.shape[1] * t.shape[2] * t.shape[3];
  tensor out({1, t.shape[1], t.shape[2], t.shape[3]});
  for (int64_t i = 0; i < size; ++i) out.data[i] = t.data[n * size + i];
  return out;
}
// lse [1,H,T] restricted to tokens [b, e): [1,H,e-b].
tensor lse_tokens(const tensor& t, int64_t b, int64_t e) {
  const int64_t H = t.shape[1], T = t.shape[2];
  tensor out({1, H, e - b});
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < e - b; ++i) out.data[h * (e - b) + i] = t.data[h * T + b + i];
  return out;
}

problem sequence(const problem& p, int64_t n) {
  problem s = p;
  s.T = p.cu_seqlens[n + 1] - p.cu_seqlens[n];
  s.cu_seqlens.clear();
  return s;
}
op_inputs sequence_inputs(const problem& p, const op_inputs& in, int64_t n) {
  const int64_t b = p.cu_seqlens[n], e = p.cu_seqlens[n + 1];
  op_inputs s;
  s.q = tokens(in.q, b, e);
  s.k = tokens(in.k, b, e);
  s.v = tokens(in.v, b, e);
  if (p.has_gate()) s.g = tokens(in.g, b, e);
  s.u = in.u;
  if (in.h0) s.h0 = state(*in.h0, n);
  if (in.d_o) s.d_o = tokens(*in.d_o, b, e);
  if (in.dht) s.dht = state(*in.dht, n);
  return s;
}

void require_equal(const std::string& what, const tensor& a, const tensor& b) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_TEST(a.shape == b.shape, boost::test_tools::per_element());
    BOOST_TEST(a.data == b.data, boost::test_tools::per_element());
  }
}

// Forward and backward of a packed batch equal, bit for bit, those of each sequence run
// as its own problem; du is the sum over the sequences.
void check_against_sequences(const problem& p, const op_inputs& in, formulation f) {
  const op_outputs out = reference::forward(p, in, f);
  const op_gradients grad = reference::backward(p, in, f);
  BOOST_TEST(out.o.shape == p.v_shape(), boost::test_tools::per_element());
  if (p.has_state()) BOOST_TEST(out.ht.shape == p.state_shape(), boost::test_tools::per_element());
  tensor du_sum(p.u_shape());
  for (int64_t n = 0; n < p.num_states(); ++n) {
    BOOST_TEST_CONTEXT("sequence " << n) {
      const problem s = sequence(p, n);
      const op_inputs x = sequence_inputs(p, in, n);
      const int64_t b = p.cu_seqlens[n], e = p.cu_seqlens[n + 1];
      const op_outputs so = reference::forward(s, x, f);
      require_equal("o", tokens(out.o, b, e), so.o);
      if (p.has_state()) require_equal("ht", state(out.ht, n), so.ht);
      if (p.op == op_kind::softmax_attn) require_equal("lse", lse_tokens(out.lse, b, e), so.lse);
      const op_gradients sg = reference::backward(s, x, f);
      require_equal("dq", tokens(grad.dq, b, e), sg.dq);
      require_equal("dk", tokens(grad.dk, b, e), sg.dk);
      require_equal("dv", tokens(grad.dv, b, e), sg.dv);
      if (p.has_gate()) require_equal("dg", tokens(grad.dg, b, e), sg.dg);
      if (in.h0) require_equal("dh0", state(grad.dh0, n), sg.dh0);
      if (p.has_bonus())
        for (size_t i = 0; i < du_sum.data.size(); ++i) du_sum.data[i] += sg.du.data[i];
    }
  }
  if (p.has_bonus()) require_equal("du", grad.du, du_sum);
}

const formulation kBoth[] = {formulation::recurrent, formulation::parallel};

double max_abs_diff(const tensor& a, const tensor& b) {
  double m = 0;
  for (size_t i = 0; i < a.data.size(); ++i) m = std::max(m, std::abs(a.data[i] - b.data[i]));
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(varlen)

BOOST_AUTO_TEST_CASE(equals_each_sequence_as_its_own_problem) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6})
    for (formulation f : kBoth)
      for (bool h0 : {true, false})
        for (bool dht : {true, false}) {
          const problem p = varlen_problem(op);
          BOOST_TEST_CONTEXT(op_name(op)
                             << (f == formulation::parallel ? " parallel" : " recurrent") << " h0 "
                             << h0 << " dht " << dht) {
            check_against_sequences(p, varlen_inputs(p, 3, h0, dht), f);
          }
        }
  for (bool causal : {true, false}) {
    const problem p = varlen_problem(op_kind::softmax_attn, causal);
    BOOST_TEST_CONTEXT("softmax_attn causal " << causal) {
      check_against_sequences(p, varlen_inputs(p), formulation::recurrent);
    }
  }
}

// Strong gates: their place in each chunk counts from the sequence's start.
BOOST_AUTO_TEST_CASE(equals_each_sequence_with_strong_gates) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6}) {
    const problem p = varlen_problem(op, true, {0, 1, 70, 71, 100}, 1, 8, 4);
    random_problem_options opts;
    opts.gates = gate_kind::strong;
    const op_inputs in = make_random_inputs(p, opts);
    // Row 2 resets (−30) at position 7 of each 64-token chunk of a sequence: token 1 + 7.
    BOOST_TEST(in.g.data[(1 + 7) * 8 + 2] == -30.0);
    BOOST_TEST(in.g.data[(71 + 7) * 8 + 2] == -30.0);
    BOOST_TEST(in.g.data[(1 + 8) * 8 + 2] != -30.0);
    for (formulation f : kBoth) check_against_sequences(p, in, f);
  }
}

// Equal lengths: a packed batch of N sequences of T tokens is a batch of B = N.
BOOST_AUTO_TEST_CASE(equal_lengths_equal_a_batch) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6, op_kind::softmax_attn}) {
    BOOST_TEST_CONTEXT(op_name(op)) {
      const problem batched{op, 3, 5, 2, 4, 3, 0.5, true};
      problem packed = batched;
      packed.B = 1;
      packed.T = 15;
      packed.cu_seqlens = {0, 5, 10, 15};
      op_inputs in = varlen_inputs(batched);
      const op_outputs a = reference::forward(batched, in);
      op_inputs packed_in = in;
      for (tensor* t : {&packed_in.q, &packed_in.k, &packed_in.g})
        if (!t->empty()) t->shape = packed.qk_shape();
      packed_in.v.shape = packed.v_shape();
      packed_in.d_o->shape = packed.v_shape();
      const op_outputs b = reference::forward(packed, packed_in);
      BOOST_TEST(a.o.data == b.o.data, boost::test_tools::per_element());
      BOOST_TEST(a.ht.data == b.ht.data, boost::test_tools::per_element());
      if (op == op_kind::softmax_attn)  // [B,H,T] against [1,H,B·T]
        for (int64_t s = 0; s < 3; ++s)
          for (int64_t h = 0; h < 2; ++h)
            for (int64_t t = 0; t < 5; ++t)
              BOOST_TEST(a.lse.data[(s * 2 + h) * 5 + t] == b.lse.data[h * 15 + s * 5 + t]);
      const op_gradients ga = reference::backward(batched, in);
      const op_gradients gb = reference::backward(packed, packed_in);
      BOOST_TEST(ga.dq.data == gb.dq.data, boost::test_tools::per_element());
      BOOST_TEST(ga.dk.data == gb.dk.data, boost::test_tools::per_element());
      BOOST_TEST(ga.dv.data == gb.dv.data, boost::test_tools::per_element());
      BOOST_TEST(ga.dg.data == gb.dg.data, boost::test_tools::per_element());
      BOOST_TEST(ga.dh0.data == gb.dh0.data, boost::test_tools::per_element());
      BOOST_TEST(max_abs_diff(ga.du, gb.du) <= 1e-14);
    }
  }
}

// A sequence forgets the one before it: changing the earlier sequence's tokens, h0 and
// cotangents changes its own results and none of the next one's.
BOOST_AUTO_TEST_CASE(state_resets_at_each_boundary) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6, op_kind::softmax_attn})
    for (int64_t n : {1, 2, 4}) {
      BOOST_TEST_CONTEXT(op_name(op) << ", sequence " << n << " after a changed one") {
        const problem p = varlen_problem(op);
        const op_inputs in = varlen_inputs(p);
        op_inputs changed = in;
        const int64_t b = p.cu_seqlens[n - 1], e = p.cu_seqlens[n], end = p.cu_seqlens[n + 1];
        for (tensor* t : {&changed.q, &changed.k, &changed.v, &changed.g, &*changed.d_o}) {
          if (t->empty()) continue;
          const int64_t row = t->shape[2] * t->shape[3];
          for (int64_t i = b * row; i < e * row; ++i) t->data[i] += 0.5;
          if (t == &changed.g)
            for (int64_t i = b * row; i < e * row; ++i) t->data[i] = -1.0;
        }
        if (p.has_state()) {
          const int64_t size = p.H * p.K * p.V;
          for (int64_t i = (n - 1) * size; i < n * size; ++i) {
            changed.h0->data[i] += 1.0;
            changed.dht->data[i] -= 1.0;
          }
        }
        const op_outputs x = reference::forward(p, in), y = reference::forward(p, changed);
        const op_gradients gx = reference::backward(p, in), gy = reference::backward(p, changed);
        BOOST_TEST(max_abs_diff(tokens(x.o, b, e), tokens(y.o, b, e)) > 1e-3);
        require_equal("o", tokens(x.o, e, end), tokens(y.o, e, end));
        require_equal("dq", tokens(gx.dq, e, end), tokens(gy.dq, e, end));
        require_equal("dk", tokens(gx.dk, e, end), tokens(gy.dk, e, end));
        require_equal("dv", tokens(gx.dv, e, end), tokens(gy.dv, e, end));
        if (p.has_state()) {
          BOOST_TEST(max_abs_diff(state(x.ht, n - 1), state(y.ht, n - 1)) > 1e-3);
          require_equal("ht", state(x.ht, n), state(y.ht, n));
          require_equal("dg", tokens(gx.dg, e, end), tokens(gy.dg, e, end));
          require_equal("dh0", state(gx.dh0, n), state(gy.dh0, n));
        } else {
          require_equal("lse", lse_tokens(x.lse, e, end), lse_tokens(y.lse, e, end));
        }
      }
    }
}

// du of rwkv6 is summed over every sequence and token: not any one sequence's.
BOOST_AUTO_TEST_CASE(du_is_summed_over_the_sequences) {
  const problem p = varlen_problem(op_kind::rwkv6);
  const op_inputs in = varlen_inputs(p);
  const op_gradients g = reference::backward(p, in);
  BOOST_TEST(g.du.shape == p.u_shape(), boost::test_tools::per_element());
  tensor sum(p.u_shape());
  for (int64_t n = 0; n < p.num_states(); ++n) {
    const op_gradients s = reference::backward(sequence(p, n), sequence_inputs(p, in, n));
    BOOST_TEST(max_abs_diff(s.du, g.du) > 1e-6);
    for (size_t i = 0; i < sum.data.size(); ++i) sum.data[i] += s.du.data[i];
  }
  BOOST_TEST(max_abs_diff(sum, g.du) <= 1e-15);
}

BOOST_AUTO_TEST_CASE(formulations_agree) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6})
    for (gate_kind gates : {gate_kind::logsigmoid, gate_kind::strong, gate_kind::reset}) {
      const problem p = varlen_problem(op, true, {0, 1, 17, 81, 96, 97}, 2, 8, 4);
      random_problem_options opts;
      opts.gates = gates;
      const op_inputs in = make_random_inputs(p, opts);
      const op_outputs rec = reference::forward(p, in, formulation::recurrent);
      const op_outputs par = reference::forward(p, in, formulation::parallel);
      BOOST_TEST(rel_l2(par.o, rec.o) <= 1e-13);
      BOOST_TEST(rel_l2(par.ht, rec.ht) <= 1e-13);
      op_gradients grec = reference::backward(p, in, formulation::recurrent);
      op_gradients gpar = reference::backward(p, in, formulation::parallel);
      auto a = gradient_tensors(p, true, grec);
      auto b = gradient_tensors(p, true, gpar);
      for (size_t n = 0; n < a.size(); ++n) BOOST_TEST_CONTEXT(op_name(op) << " " << a[n].name) {
          BOOST_TEST(rel_l2(*b[n].value, *a[n].value) <= 1e-13);
        }
    }
}

BOOST_AUTO_TEST_CASE(gradcheck_passes) {
  auto check = [](const problem& p, formulation f, int64_t max_jacobian) {
    const op_inputs in = varlen_inputs(p, 5);
    reference::gradcheck_options opts;
    opts.max_jacobian_elements = max_jacobian;
    const auto r = reference::gradcheck(p, in, reference::reference_op(p, f), opts);
    for (const auto& d : r.directional)
      BOOST_TEST_CONTEXT(d.input << ": fd " << d.finite_difference << " analytic " << d.analytic) {
        BOOST_TEST(d.error <= 1e-8);
      }
    BOOST_TEST(r.jacobian_checked == (max_jacobian > 0));
    BOOST_TEST(r.passed);
  };
  for (op_kind op : {op_kind::gla, op_kind::rwkv6})
    for (formulation f : kBoth) {
      BOOST_TEST_CONTEXT(op_name(op) << (f == formulation::parallel ? " parallel" : " recurrent")) {
        check(varlen_problem(op), f, 0);
        check(varlen_problem(op, true, {0, 1, 3}, 1, 2, 2), f, 1 << 20);  // full Jacobian
      }
    }
  for (bool causal : {true, false}) {
    BOOST_TEST_CONTEXT("softmax_attn causal " << causal) {
      check(varlen_problem(op_kind::softmax_attn, causal), formulation::recurrent, 0);
      check(varlen_problem(op_kind::softmax_attn, causal, {0, 1, 4}, 1, 2, 2),
            formulation::recurrent, 1 << 20);
    }
  }
}

BOOST_AUTO_TEST_CASE(random_inputs_have_a_state_per_sequence) {
  const problem p = varlen_problem(op_kind::gla);
  const op_inputs in = varlen_inputs(p);
  const std::vector<int64_t> want = {5, 2, 4, 3};
  BOOST_TEST(in.h0->shape == want, boost::test_tools::per_element());
  BOOST_TEST(in.dht->shape == want, boost::test_tools::per_element());
  BOOST_TEST(reference::forward(p, in).ht.shape == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(malformed_offsets_and_states_are_refused) {
  const problem good = varlen_problem(op_kind::gla);
  const op_inputs in = varlen_inputs(good);
  auto refused = [&](problem p, const op_inputs& x, const std::string& fragment) {
    BOOST_TEST_CONTEXT(fragment) {
      try {
        reference::forward(p, x);
        BOOST_FAIL("accepted");
      } catch (const std::invalid_argument& e) {
        BOOST_TEST(std::string(e.what()).find(fragment) != std::string::npos, e.what());
      }
    }
  };
  problem p = good;
  p.B = 2;
  refused(p, in, "needs B = 1");
  p = good;
  p.cu_seqlens = {0};
  refused(p, in, "N + 1 ≥ 2");
  p.cu_seqlens = {1, 5, 20};
  refused(p, in, "must start at 0");
  p.cu_seqlens = {0, 5, 5, 20};
  refused(p, in, "must increase strictly");
  p.cu_seqlens = {0, 5, 19};
  refused(p, in, "must end at T = 20");
  op_inputs x = in;
  x.h0 = tensor({1, 2, 4, 3});
  refused(good, x, "h0 has shape [1, 2, 4, 3], expected [5, 2, 4, 3]");
}

BOOST_AUTO_TEST_SUITE_END()
