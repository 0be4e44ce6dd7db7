// The chained-decode drift check (decode_drift.hpp) in this process, through real
// plugins: its checkpoints, an exact chain at fp64, the backend's own state dtype for the
// carried state, and its result's JSON both ways.
#include "decode_drift.hpp"

#include <dlfcn.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decode_drift_json.hpp"

using namespace glabench;

namespace {

decode_drift_options small_chain(int64_t steps) {
  decode_drift_options o;
  o.B = 2, o.H = 2, o.K = 8, o.V = 8, o.steps = steps;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(decode_drift)

BOOST_AUTO_TEST_CASE(checkpoints_are_powers_of_four_and_the_last_step) {
  BOOST_TEST(drift_checkpoints(1024) == (std::vector<int64_t>{1, 4, 16, 64, 256, 1024}),
             boost::test_tools::per_element());
  BOOST_TEST(drift_checkpoints(1000) == (std::vector<int64_t>{1, 4, 16, 64, 256, 1000}),
             boost::test_tools::per_element());
  BOOST_TEST(drift_checkpoints(1) == (std::vector<int64_t>{1}), boost::test_tools::per_element());
  BOOST_TEST(drift_checkpoints(5) == (std::vector<int64_t>{1, 4, 5}),
             boost::test_tools::per_element());
}

// naive_recurrent at fp64 computes in the reference's order: a chain that carried its
// state exactly stays at zero drift for every step, o and state alike; at fp32 the drift
// is fp32's, neither zero nor growing past the threshold.
BOOST_AUTO_TEST_CASE(naive_recurrent_chains_exactly_at_fp64_and_boundedly_at_fp32) {
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  for (const op_kind op : {op_kind::gla, op_kind::rwkv6}) {
    BOOST_TEST_CONTEXT(op_name(op)) {
      const decode_drift_result exact =
          run_decode_drift(naive, op, dtype::fp64, "mild", small_chain(100));
      BOOST_TEST(case_status_name(exact.status) == "passed", exact.message);
      BOOST_TEST(exact.steps_run == 100);
      BOOST_TEST(exact.max_o_rel_l2 == 0.0);
      BOOST_TEST(exact.max_state_rel_l2 == 0.0);
      BOOST_REQUIRE(exact.checkpoints.size() == 5u);  // 1, 4, 16, 64, 100
      BOOST_TEST(exact.checkpoints.back().step == 100);

      const decode_drift_result fp32 =
          run_decode_drift(naive, op, dtype::fp32, "cliff", small_chain(100));
      BOOST_TEST(case_status_name(fp32.status) == "passed", fp32.message);
      BOOST_TEST((fp32.state_storage == dtype::fp32));
      BOOST_TEST(fp32.max_o_rel_l2 > 1e-9);
      BOOST_TEST(fp32.max_o_rel_l2 < 1e-5);
      BOOST_TEST(fp32.max_state_rel_l2 > 1e-9);
      BOOST_TEST(fp32.max_state_rel_l2 < 1e-5);
    }
  }
}

// A backend with GLABENCH_FEATURE_STATE_FP32 is given its h0 in float32 at bf16 storage:
// the carried state is its fp32 ht, not the storage dtype's rounding of it.
BOOST_AUTO_TEST_CASE(the_state_is_carried_in_the_backends_state_dtype) {
  const loaded_backend b =
      load_backend(std::string(TEST_PLUGIN_DIR "/glabench_backend_test_varlen_state_fp32.so"));
  const decode_drift_result r =
      run_decode_drift(b, op_kind::gla, dtype::bf16, "mild", small_chain(3));
  BOOST_TEST((r.state_storage == dtype::fp32));
  BOOST_TEST(r.steps_run == 3);  // it writes o = 0: failed on drift, but every step ran
  using seen_fn = const char* (*)();
  const auto seen = reinterpret_cast<seen_fn>(dlsym(b.library.get(), "varlen_plugin_seen"));
  BOOST_REQUIRE(seen);
  const std::string last_call = seen();
  BOOST_TEST(last_call.find("h0=[2,2,8,8]float32 ht=[2,2,8,8]float32") != std::string::npos,
             last_call);
}

BOOST_AUTO_TEST_CASE(a_dtype_the_backend_lacks_is_unsupported_with_the_reason) {
  const loaded_backend b =
      load_backend(std::string(TEST_PLUGIN_DIR "/glabench_backend_test_varlen_state_fp32.so"));
  const decode_drift_result r =
      run_decode_drift(b, op_kind::gla, dtype::fp16, "mild", small_chain(4));
  BOOST_TEST(case_status_name(r.status) == "unsupported");
  BOOST_TEST(r.message == "no gla forward in fp16");
  BOOST_TEST(r.steps_run == 0);
}

// As `decode-drift --json` writes a case and a worker hands it over; a step whose output
// was not finite crosses as null and comes back NaN.
BOOST_AUTO_TEST_CASE(a_result_crosses_json_whole) {
  decode_drift_result r;
  r.backend = "b";
  r.op = op_kind::rwkv6;
  r.storage = dtype::bf16;
  r.state_storage = dtype::fp32;
  r.gates = "cliff";
  r.status = case_status::failed;
  r.message = "step 5: o not finite";
  r.steps = 16;
  r.steps_run = 4;
  r.threshold = 1e-2;
  r.checkpoints = {{1, 1e-3, 2e-4}, {4, 2e-3, 3e-4}, {5, NAN, 4e-4}};
  r.max_o_rel_l2 = 2e-3;
  r.max_o_step = 4;
  r.max_state_rel_l2 = 3e-4;
  r.max_state_step = 4;
  r.seconds = 0.5;
  r.devices = {1};
  const nlohmann::json j = to_json(r);
  BOOST_TEST(j["checkpoints"][2]["o_rel_l2"].is_null());
  BOOST_TEST(j["max"]["state_step"] == 4);
  const decode_drift_result back = decode_drift_from_json(nlohmann::json::parse(j.dump()));
  BOOST_TEST(back.backend == "b");
  BOOST_TEST((back.op == op_kind::rwkv6 && back.storage == dtype::bf16));
  BOOST_TEST((back.state_storage == dtype::fp32));
  BOOST_TEST(back.gates == "cliff");
  BOOST_TEST(case_status_name(back.status) == "failed");
  BOOST_TEST(back.message == r.message);
  BOOST_TEST((back.steps == 16 && back.steps_run == 4 && back.threshold == 1e-2));
  BOOST_REQUIRE(back.checkpoints.size() == 3u);
  BOOST_TEST(back.checkpoints[1].state_rel_l2 == 3e-4);
  BOOST_TEST(std::isnan(back.checkpoints[2].o_rel_l2));
  BOOST_TEST((back.max_o_rel_l2 == 2e-3 && back.max_o_step == 4));
  BOOST_TEST((back.max_state_rel_l2 == 3e-4 && back.max_state_step == 4));
  BOOST_TEST(back.devices == std::vector<int32_t>{1}, boost::test_tools::per_element());
  BOOST_CHECK_THROW(decode_drift_from_json(nlohmann::json::object()), std::runtime_error);
}

BOOST_AUTO_TEST_SUITE_END()
