// The guard regions around every tensor: a backend that writes outside one fails,
// and the failure names the tensor (plugins/overrun_plugin.cpp).
#include <boost/test/unit_test.hpp>
#include <string>

#include "backend_runner.hpp"
#include "fixture.hpp"
#include "fixture_catalog.hpp"
#include "verifier.hpp"

using namespace glabench;

namespace {

fixture gla_basic() {
  for (const auto& r : fixture_recipes("small"))
    if (r.name == "gla_basic") {
      fixture f = make_fixture(r);
      f.path = "gla_basic.h5";
      return f;
    }
  throw std::logic_error("no gla_basic recipe");
}

loaded_backend overrun_plugin(const std::string& variant) {
  return load_backend(std::string(TEST_PLUGIN_DIR "/glabench_backend_test_") + variant + ".so");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(guards)

// The control: the same backend without the stray write passes everything, gradient
// check included, so the failures below come from the guards alone.
BOOST_AUTO_TEST_CASE(in_bounds_backend_passes) {
  const verify_case_result r =
      verify_case(overrun_plugin("inbounds"), gla_basic(), dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "passed", r.message);
  BOOST_REQUIRE(r.gradcheck.has_value());
  BOOST_TEST(r.gradcheck->passed);
}

BOOST_AUTO_TEST_CASE(write_past_the_end_of_an_output_fails_naming_it) {
  const verify_case_result r = verify_case(overrun_plugin("overrun"), gla_basic(), dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(verify_exit_code({r}) == 1);
  BOOST_TEST(contains(r.message, "test_overrun forward wrote past the end of output 'o' ("),
             r.message);
  BOOST_TEST(contains(r.message, "of 256 guard bytes after it changed)"), r.message);
  BOOST_TEST(!contains(r.message, "'ht'"), r.message);  // only the tensor written past
}

BOOST_AUTO_TEST_CASE(write_before_the_start_of_an_output_fails_naming_it) {
  const verify_case_result r =
      verify_case(overrun_plugin("underrun"), gla_basic(), dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(contains(r.message, "test_underrun forward wrote before the start of output 'o' ("),
             r.message);
  BOOST_TEST(contains(r.message, "of 256 guard bytes before it changed)"), r.message);
}

// The forward is clean and checked; the backward's stray write is put down to it.
BOOST_AUTO_TEST_CASE(write_past_a_gradient_fails_naming_it) {
  const verify_case_result r =
      verify_case(overrun_plugin("overrun_dq"), gla_basic(), dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(contains(r.message, "test_overrun_dq backward wrote past the end of output 'dq'"),
             r.message);
  BOOST_TEST(!r.checks.empty());  // the forward's checks ran and were recorded
}

BOOST_AUTO_TEST_CASE(write_past_an_input_fails_naming_it) {
  const verify_case_result r =
      verify_case(overrun_plugin("overrun_input"), gla_basic(), dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(contains(r.message, "test_overrun_input forward wrote past the end of input 'q'"),
             r.message);
}

// The bench's way: launches without checks (the timed loop), then one check after them
// all. A failed check restores the guards, so the next reports only new damage.
BOOST_AUTO_TEST_CASE(check_after_untimed_launches_and_restore) {
  const loaded_backend b = overrun_plugin("overrun");
  const fixture f = gla_basic();
  backend_runner runner(b, f.prob, dtype::fp64, true, true);
  runner.prepare(f.inputs, true);
  runner.poison_outputs();
  for (int i = 0; i < 3; ++i) {
    runner.launch_forward();
    runner.launch_backward();
  }
  try {
    runner.check_guards();
    BOOST_FAIL("no guard violation reported");
  } catch (const backend_call_error& e) {
    BOOST_TEST(e.status() == GLABENCH_ERROR_RUNTIME);
    BOOST_TEST(contains(e.what(), "test_overrun forward wrote past the end of output 'o'"),
               e.what());
  }
  BOOST_CHECK_NO_THROW(runner.check_guards());
  runner.launch_backward();  // this variant's backward stays in bounds
  BOOST_CHECK_NO_THROW(runner.check_guards());
}

// A correct backend leaves every guard intact through forward, backward and their
// untimed launches.
BOOST_AUTO_TEST_CASE(correct_backend_leaves_guards_intact) {
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  const fixture f = gla_basic();
  for (dtype d : {dtype::fp64, dtype::fp32}) {
    backend_runner runner(naive, f.prob, d, true, true);
    BOOST_CHECK_NO_THROW(runner.backward(f.inputs));
    runner.launch_forward();
    runner.launch_backward();
    BOOST_CHECK_NO_THROW(runner.check_guards());
  }
}

BOOST_AUTO_TEST_SUITE_END()
