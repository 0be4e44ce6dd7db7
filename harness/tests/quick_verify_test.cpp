// bench's quick verify of softmax_attn above the whole-head limit (the limit lowered so
// that small problems take that path): sampled rows against the whole head's rows, the
// rows it samples, what it leaves unchecked, and a wrong backend failing it.
#include "quick_verify.hpp"

#include <algorithm>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "backend_runner.hpp"
#include "bad_fixtures.hpp"
#include "glabench/reference/random_inputs.hpp"

namespace bdata = boost::unit_test::data;
using namespace glabench;

namespace {

loaded_backend test_plugin(const std::string& variant) {
  return load_backend(std::string(TEST_PLUGIN_DIR "/glabench_backend_test_") + variant + ".so");
}

problem softmax_problem(int64_t T, bool causal) {
  return {op_kind::softmax_attn, 2, T, 2, 8, 8, 1.0 / std::sqrt(8.0), causal};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quick_verify)

BOOST_AUTO_TEST_CASE(sampled_rows) {
  const std::vector<int64_t> q = sampled_query_rows(100000);
  BOOST_TEST(q.size() == size_t(kQuickVerifyQueryRows));
  BOOST_TEST(q.front() == 0);
  BOOST_TEST(q.back() == 99999);
  BOOST_TEST(std::is_sorted(q.begin(), q.end()));
  BOOST_TEST(sampled_query_rows(5) == (std::vector<int64_t>{0, 1, 2, 3, 4}),
             boost::test_tools::per_element());

  const std::vector<int64_t> keys = sampled_key_rows(softmax_problem(300, true), true);
  const std::vector<int64_t> want = {44,  74,  104, 134, 164, 194, 224, 254, 284, 285, 286, 287,
                                     288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299};
  BOOST_TEST(keys == want, boost::test_tools::per_element());
  BOOST_TEST(sampled_key_rows(softmax_problem(300, true), false).empty());
  BOOST_TEST(sampled_key_rows(softmax_problem(300, false), true).empty());
  BOOST_TEST(sampled_key_rows(softmax_problem(10, true), true).size() == 10u);
}

// The sampled rows equal the whole head's rows: checked against the whole-head
// reference as if it were the backend, every tensor agrees to rounding.
BOOST_DATA_TEST_CASE(rows_match_the_whole_head, bdata::make({true, false}), causal) {
  const problem p = softmax_problem(300, causal);
  random_problem_options ro;
  ro.seed = 11;
  const op_inputs in = make_random_inputs(p, ro);
  const std::vector<expected_head> whole = reference_heads(p, in, dtype::fp64, dtype::fp64, true);
  const std::vector<expected_head> rows =
      reference_heads(p, in, dtype::fp64, dtype::fp64, true, 64);
  BOOST_REQUIRE_EQUAL(whole.size(), 2u);
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  BOOST_TEST(!whole[0].rows);
  for (const auto& e : rows) {
    BOOST_REQUIRE(e.rows);
    BOOST_TEST(e.rows->queries == sampled_query_rows(300), boost::test_tools::per_element());
    BOOST_TEST(e.rows->keys.size() == (causal ? 24u : 0u));
  }
  auto fetch_whole = [&](head_index at) {
    for (const auto& e : whole)
      if (e.at.b == at.b && e.at.h == at.h) return head_result{e.out, e.grads};
    throw std::logic_error("no such head");
  };
  const std::vector<tensor_check> checks = check_heads(p, false, rows, 1e-12, fetch_whole);
  std::vector<std::string> names;
  for (const auto& c : checks) {
    names.push_back(c.tensor);
    BOOST_TEST(c.passed, c.tensor << " " << c.rel_l2);
    BOOST_TEST(c.rel_l2 <= 1e-12, c.tensor);
  }
  const std::vector<std::string> want = causal
                                            ? std::vector<std::string>{"dk", "dq", "dv", "lse", "o"}
                                            : std::vector<std::string>{"dq", "lse", "o"};
  BOOST_TEST(names == want, boost::test_tools::per_element());

  // Full attention's dk, dv go unchecked, and the row says so; causal leaves nothing out.
  const std::string note = quick_verify_note(p, rows, true);
  BOOST_TEST(note.empty() == causal, note);
  if (!causal) BOOST_TEST(note.find("dk, dv not checked") != std::string::npos, note);
  BOOST_TEST(quick_verify_note(p, rows, false).empty());
  BOOST_TEST(quick_verify_note(p, whole, true).empty());

  // A wrong value in one sampled row of one head fails that tensor, and only that one.
  auto fetch_bent = [&](head_index at) {
    head_result r = fetch_whole(at);
    if (at.b == 1) r.grads->dq.ptr()[299 * p.K + 3] += 1.0;
    return r;
  };
  for (const auto& c : check_heads(p, false, rows, 1e-6, fetch_bent))
    BOOST_TEST(c.passed == (c.tensor != "dq"), c.tensor << " " << c.rel_l2);
}

// A backend that masks whatever it is told fails the sampled-row check of a full
// problem, and the correct one passes it.
BOOST_AUTO_TEST_CASE(always_causal_backend_fails_the_sampled_rows) {
  const problem p = softmax_problem(64, false);
  const op_inputs in = make_random_inputs(p, {});
  const std::vector<expected_head> want =
      reference_heads(p, in, dtype::fp64, dtype::fp64, false, 16);
  BOOST_REQUIRE(want[0].rows);
  for (const std::string variant : {"softmax", "softmax_always_causal"}) {
    const loaded_backend backend = test_plugin(variant);
    backend_runner runner(backend, p, dtype::fp64, true, false);
    runner.prepare(in, false);
    runner.poison_outputs();
    runner.launch_forward();
    runner.context().synchronize();
    const std::vector<tensor_check> checks =
        check_heads(p, true, want, default_tolerance(dtype::fp64), [&](head_index at) {
          return head_result{runner.download_head_outputs(at.b, at.h), {}};
        });
    BOOST_REQUIRE_EQUAL(checks.size(), 2u);  // lse, o
    for (const auto& c : checks) {
      BOOST_TEST_CONTEXT(variant << " " << c.tensor << " rel_l2 " << c.rel_l2) {
        if (variant == "softmax") {
          BOOST_TEST(c.passed);
        } else {
          BOOST_TEST(!c.passed);
          BOOST_TEST(c.rel_l2 > 1e-3);
        }
      }
    }
  }
}

// rwkv6's du sums over the sequences: each sampled head's du (the backend's row h) is
// checked against the reference's summed over every sequence of that head, packed batches
// too. naive_recurrent passes; a wrong du fails only du. Over more than
// kQuickVerifyDuMaxSequences sequences du goes unchecked, and the row says so.
void check_du_of(const problem& p, const op_inputs& in) {
  const std::vector<expected_head> want = reference_heads(p, in, dtype::fp64, dtype::fp64, true);
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  backend_runner runner(naive, p, dtype::fp64, true, true);
  runner.prepare(in, true);
  runner.launch_forward();
  runner.launch_backward();
  auto fetch = [&](head_index at) {
    return head_result{runner.download_head_outputs(at.b, at.h),
                       runner.download_head_gradients(at.b, at.h)};
  };
  const double tol = default_tolerance(dtype::fp64);
  const bool checked = p.num_states() <= kQuickVerifyDuMaxSequences;
  bool du_checked = false;
  for (const auto& c : check_heads(p, true, want, tol, fetch)) {
    BOOST_TEST(c.passed, c.tensor << " " << c.rel_l2);
    du_checked = du_checked || c.tensor == "du";
  }
  BOOST_TEST(du_checked == checked);
  const std::string note = quick_verify_note(p, want, true);
  BOOST_TEST(note.empty() == checked, note);
  if (!checked) BOOST_TEST(note.find("du not checked") != std::string::npos, note);
  auto fetch_bent = [&](head_index at) {
    head_result r = fetch(at);
    r.grads->du.ptr()[1] += 1.0;
    return r;
  };
  for (const auto& c : check_heads(p, true, want, tol, fetch_bent))
    BOOST_TEST(c.passed == (c.tensor != "du"), c.tensor << " " << c.rel_l2);
}

BOOST_DATA_TEST_CASE(rwkv6_du_is_checked_over_the_sequences, bdata::make({1, 3, 17}), B) {
  const problem p{op_kind::rwkv6, B, B > 3 ? 5 : 40, 2, 4, 6, 0.5};
  random_problem_options ro;
  ro.seed = 17;
  check_du_of(p, make_random_inputs(p, ro));
}

BOOST_AUTO_TEST_CASE(rwkv6_du_is_checked_over_a_packed_batch) {
  const fixture f = testing::packed_fixture(op_kind::rwkv6);
  BOOST_REQUIRE(f.prob.num_states() > 1);
  check_du_of(f.prob, f.inputs);
}

BOOST_AUTO_TEST_SUITE_END()
