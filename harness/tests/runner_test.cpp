// The runner and verifier end to end through real plugins.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "backend_runner.hpp"
#include "fixture.hpp"
#include "fixture_catalog.hpp"
#include "verifier.hpp"

using namespace glabench;

namespace {

fixture recipe_fixture(const std::string& name) {
  for (const auto& r : fixture_recipes("small"))
    if (r.name == name) {
      fixture f = make_fixture(r);
      f.path = name + ".h5";
      return f;
    }
  throw std::logic_error(name);
}

loaded_backend test_plugin(const std::string& variant) {
  return load_backend(std::string(TEST_PLUGIN_DIR "/glabench_backend_test_") + variant + ".so");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(runner)

// Outputs are poisoned with NaN before each call: a backend that writes nothing
// returns NaN everywhere, never stale or zero memory.
BOOST_AUTO_TEST_CASE(unwritten_outputs_are_nan) {
  const loaded_backend silent = test_plugin("silent");
  const fixture f = recipe_fixture("gla_forward_only");
  backend_runner runner(silent, f.prob, dtype::fp64, true, false);
  const op_outputs out = runner.forward(f.inputs);
  BOOST_TEST(out.o.numel() == f.expected.o.numel());
  for (double x : out.o.data) BOOST_REQUIRE(std::isnan(x));
  for (double x : out.ht.data) BOOST_REQUIRE(std::isnan(x));

  const verify_case_result r = verify_case(silent, f, dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(!r.checks.front().finite);
}

BOOST_AUTO_TEST_CASE(backend_errors_carry_their_message) {
  const loaded_backend failing = test_plugin("failing");
  const fixture f = recipe_fixture("gla_forward_only");
  const verify_case_result r = verify_case(failing, f, dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(r.message.find("deliberate failure from the test plugin") != std::string::npos,
             r.message);
  BOOST_TEST(r.message.find("runtime error") != std::string::npos, r.message);
}

BOOST_AUTO_TEST_CASE(unsupported_dtype_is_skipped_not_failed) {
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  const verify_case_result r = verify_case(naive, recipe_fixture("gla_basic"), dtype::bf16, {});
  BOOST_TEST(case_status_name(r.status) == "unsupported");
  BOOST_TEST(verify_exit_code({r}) == 77);
}

BOOST_AUTO_TEST_CASE(naive_backend_passes_with_gradient_check) {
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  for (const char* name : {"gla_basic", "rwkv6_basic", "gla_tiny", "rwkv6_tiny"}) {
    BOOST_TEST_CONTEXT(name) {
      const verify_case_result r = verify_case(naive, recipe_fixture(name), dtype::fp64, {});
      BOOST_TEST(case_status_name(r.status) == "passed", r.message);
      BOOST_REQUIRE(r.gradcheck.has_value());
      BOOST_TEST(r.gradcheck->passed);
      BOOST_TEST(r.gradcheck->jacobian_checked == (std::string(name).ends_with("tiny")));
      BOOST_TEST(r.checks.size() == (std::string(name).starts_with("gla") ? 7u : 8u));
    }
  }
}

// The verifier is not vacuous: a fixture whose expected value is off by 1e-9
// relative fails in fp64.
BOOST_AUTO_TEST_CASE(detects_a_small_error_in_fp64) {
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  fixture f = recipe_fixture("gla_basic");
  for (double& x : f.expected.o.data) x *= 1 + 1e-9;
  const verify_case_result r = verify_case(naive, f, dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(verify_exit_code({r}) == 1);
}

// The bench downloads single heads: each must equal that head of the whole tensor.
BOOST_AUTO_TEST_CASE(head_downloads_match_the_whole_tensors) {
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  const fixture f = recipe_fixture("gla_basic");  // B2 T16 H2 K8 V8, h0 and dht present
  backend_runner runner(naive, f.prob, dtype::fp32, true, true);
  runner.prepare(f.inputs, true);
  runner.launch_forward();
  runner.launch_backward();
  const op_outputs all = runner.download_outputs();
  const op_gradients all_grads = runner.download_gradients();
  const int64_t T = f.prob.T, H = f.prob.H, K = f.prob.K, V = f.prob.V;
  for (int64_t b = 0; b < f.prob.B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const op_outputs one = runner.download_head_outputs(b, h);
      const op_gradients grads = runner.download_head_gradients(b, h);
      BOOST_TEST((one.o.shape == std::vector<int64_t>{1, T, 1, V}));
      BOOST_TEST((grads.dh0.shape == std::vector<int64_t>{1, 1, K, V}));
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t j = 0; j < V; ++j)
          BOOST_REQUIRE(one.o.data[t * V + j] == all.o.data[((b * T + t) * H + h) * V + j]);
        for (int64_t i = 0; i < K; ++i)
          BOOST_REQUIRE(grads.dg.data[t * K + i] ==
                        all_grads.dg.data[((b * T + t) * H + h) * K + i]);
      }
      for (int64_t n = 0; n < K * V; ++n) {
        BOOST_REQUIRE(one.ht.data[n] == all.ht.data[(b * H + h) * K * V + n]);
        BOOST_REQUIRE(grads.dh0.data[n] == all_grads.dh0.data[(b * H + h) * K * V + n]);
      }
    }
}

BOOST_AUTO_TEST_SUITE_END()
