// What crosses to a worker is described once (worker_protocol.hpp, json_fields.hpp): each
// struct comes back whole through its description and the pipe's CBOR, and the
// description's rules (optional fields, names, NaN) hold both ways.
#include "worker_protocol.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend_build.hpp"
#include "fixture.hpp"
#include "json_fields.hpp"
#include "verify_case_json.hpp"

using namespace glabench;

namespace {

// Through the description and the pipe's encoding, as a worker receives it.
template <typename V, typename Describe>
V across_the_pipe(const V& v, const Describe& describe) {
  const std::vector<std::uint8_t> frame = nlohmann::json::to_cbor(to_json_by(v, describe));
  return from_json_by<V>(nlohmann::json::from_cbor(frame), describe);
}

void same_tensor(const tensor& a, const tensor& b) {
  BOOST_TEST(a.shape == b.shape);
  BOOST_TEST(a.data == b.data);  // bit for bit: doubles cross as their bytes
}

void same_optional(const std::optional<tensor>& a, const std::optional<tensor>& b) {
  BOOST_REQUIRE(a.has_value() == b.has_value());
  if (a) same_tensor(*a, *b);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(worker_protocol_descriptions)

BOOST_AUTO_TEST_CASE(a_fixture_crosses_whole) {
  for (const char* name : {"gla_basic", "rwkv6_no_h0", "gla_forward_only", "softmax_attn_causal"}) {
    BOOST_TEST_INFO(name);
    const fixture f = read_fixture(std::string(FIXTURE_DIR "/") + name + ".h5");
    const fixture g = across_the_pipe(f, worker_protocol::fixture_fields);
    BOOST_TEST(g.path == f.path);
    BOOST_TEST(g.description == f.description);
    BOOST_TEST((g.prob.op == f.prob.op));
    BOOST_TEST((std::tie(g.prob.B, g.prob.T, g.prob.H, g.prob.K, g.prob.V) ==
                std::tie(f.prob.B, f.prob.T, f.prob.H, f.prob.K, f.prob.V)));
    BOOST_TEST(g.prob.scale == f.prob.scale);
    BOOST_TEST(g.prob.causal == f.prob.causal);
    for (auto [a, b] : {std::pair{&f.inputs.q, &g.inputs.q},
                        {&f.inputs.k, &g.inputs.k},
                        {&f.inputs.v, &g.inputs.v},
                        {&f.inputs.g, &g.inputs.g},
                        {&f.inputs.u, &g.inputs.u},
                        {&f.expected.o, &g.expected.o},
                        {&f.expected.ht, &g.expected.ht},
                        {&f.expected.lse, &g.expected.lse}})
      same_tensor(*a, *b);
    same_optional(f.inputs.h0, g.inputs.h0);
    same_optional(f.inputs.d_o, g.inputs.d_o);
    same_optional(f.inputs.dht, g.inputs.dht);
    BOOST_REQUIRE(f.expected_grads.has_value() == g.expected_grads.has_value());
    if (f.expected_grads) {
      same_tensor(f.expected_grads->dq, g.expected_grads->dq);
      same_tensor(f.expected_grads->dg, g.expected_grads->dg);
      same_tensor(f.expected_grads->dh0, g.expected_grads->dh0);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_verify_case_crosses_whole_with_its_rules) {
  verify_case_result r;
  r.backend = "b";
  r.fixture = "gla_basic";
  r.fixture_path = "/x/gla_basic.h5";
  r.op = op_kind::rwkv6;
  r.storage = dtype::bf16;
  r.status = case_status::failed;
  r.message = "o: not finite";
  r.seconds = 0.25;
  r.devices = {1, 0};
  tensor_check nan_check{"o", NAN, 1e-2, false, NAN, false};
  nan_check.non_finite = 3;
  nan_check.elements = 4096;
  nan_check.first_non_finite = {0, 5, 1, 3};
  r.checks = {nan_check, {"ht", 1e-6, 1e-2, true, 2e-7, true}};
  r.gradcheck = reference::gradcheck_report{{{"q", 1.5, 1.5, 0.0}}, true, 1e-9, 1e-9, 1e-8, true};
  const nlohmann::json j = to_json(r);
  BOOST_TEST(j["tensors"][0]["rel_l2"].is_null());  // NaN is not JSON
  BOOST_TEST(j["tensors"][0]["non_finite"] == 3);
  BOOST_TEST(!j["tensors"][1].contains("non_finite"));  // written only where not finite
  BOOST_TEST(j["op"] == "rwkv6");
  BOOST_TEST(j["dtype"] == "bf16");
  BOOST_TEST(!j.contains("state_dtype"));  // none recorded
  r.state_storage = dtype::fp32;
  BOOST_TEST(to_json(r)["state_dtype"] == "fp32");
  BOOST_TEST((*verify_case_from_json(to_json(r)).state_storage == dtype::fp32));
  const verify_case_result back =
      verify_case_from_json(nlohmann::json::from_cbor(nlohmann::json::to_cbor(j)));
  BOOST_TEST(to_json(back) == j);
  BOOST_TEST(std::isnan(back.checks[0].rel_l2));
  BOOST_TEST((back.checks[0].first_non_finite == std::vector<int64_t>{0, 5, 1, 3}));
  BOOST_TEST(back.checks[1].non_finite == 0);
  BOOST_REQUIRE(back.gradcheck.has_value());
  BOOST_TEST(back.gradcheck->directional.at(0).input == "q");

  nlohmann::json old = j;  // a file from before the devices were recorded, without gradcheck
  old.erase("devices");
  old.erase("gradcheck");
  const verify_case_result read_old = verify_case_from_json(old);
  BOOST_TEST((read_old.devices == std::vector<int32_t>{0}));
  BOOST_TEST(!read_old.gradcheck.has_value());
  nlohmann::json unknown = j;
  unknown["status"] = "sideways";
  BOOST_CHECK_THROW(verify_case_from_json(unknown), std::runtime_error);
  unknown = j;
  unknown.erase("message");
  BOOST_CHECK_THROW(verify_case_from_json(unknown), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(a_build_is_written_as_described) {
  backend_build described;
  described.described = true;
  described.optimized = true;
  described.compiler = "GNU 12.2.0";
  described.build_type = "Release";
  described.cuda_architectures = "90";
  described.abi = "1.4";
  backend_build old;
  old.abi = "1.0";
  BOOST_TEST(to_json(old) == nlohmann::json({{"described", false}, {"abi", "1.0"}}));
  BOOST_TEST(to_json(described).size() == 6u);
  for (const backend_build& b : {described, old}) {
    const backend_build back = backend_build_from_json(to_json(b));
    BOOST_TEST(back.summary() == b.summary());
    BOOST_TEST(to_json(back) == to_json(b));
  }
}

BOOST_AUTO_TEST_CASE(a_backend_description_crosses_whole) {
  worker_protocol::backend_description d;
  d.name = "ring";
  d.version = "1.2.3";
  d.device_type = kDLCUDA;
  d.abi_major = 1;
  d.abi_minor = 4;
  d.capabilities = {{GLABENCH_OP_SOFTMAX_ATTN, {kDLBfloat, 16, 1}, GLABENCH_MODE_BACKWARD}};
  d.build.abi = "1.4";
  d.knobs = {"RING_SOFTMAX_CUDA_SHARDS"};
  d.features = GLABENCH_FEATURE_VARLEN | GLABENCH_FEATURE_STATE_FP32;
  d.availability = "unavailable: no CUDA device";
  const auto back = across_the_pipe(d, worker_protocol::backend_description_fields);
  BOOST_TEST(back.name == d.name);
  BOOST_TEST(back.version == d.version);
  BOOST_TEST((back.device_type == kDLCUDA));
  BOOST_TEST(back.abi_minor == 4u);
  BOOST_REQUIRE_EQUAL(back.capabilities.size(), 1u);
  BOOST_TEST((back.capabilities[0].op == GLABENCH_OP_SOFTMAX_ATTN));
  BOOST_TEST(back.capabilities[0].dtype.code == kDLBfloat);
  BOOST_TEST(back.capabilities[0].dtype.bits == 16);
  BOOST_TEST((back.capabilities[0].mode == GLABENCH_MODE_BACKWARD));
  BOOST_TEST(back.knobs == d.knobs);
  BOOST_TEST(back.features == d.features);
  BOOST_TEST(back.availability == d.availability);
}

// A packed batch's offsets cross with its problem (ABI 1.5); a problem without them
// writes none and reads back none.
BOOST_AUTO_TEST_CASE(a_problem_crosses_with_its_cu_seqlens) {
  problem p;
  p.op = op_kind::rwkv6;
  p.B = 1;
  p.T = 9;
  p.cu_seqlens = {0, 2, 5, 9};
  const problem back = across_the_pipe(p, worker_protocol::problem_fields);
  BOOST_TEST(back.cu_seqlens == p.cu_seqlens);
  BOOST_TEST(back.num_states() == 3);
  p.cu_seqlens.clear();
  BOOST_TEST(!to_json_by(p, worker_protocol::problem_fields).contains("cu_seqlens"));
  BOOST_TEST(!across_the_pipe(p, worker_protocol::problem_fields).varlen());
}

BOOST_AUTO_TEST_CASE(verify_options_leave_out_what_is_unset) {
  verify_options o;
  o.gradcheck = false;
  o.devices = {2, 3};
  nlohmann::json j = to_json_by(o, worker_protocol::verify_options_fields);
  BOOST_TEST(!j.contains("tolerance"));
  BOOST_TEST(!across_the_pipe(o, worker_protocol::verify_options_fields).tolerance.has_value());
  o.tolerance = 1e-3;
  const verify_options back = across_the_pipe(o, worker_protocol::verify_options_fields);
  BOOST_TEST(*back.tolerance == 1e-3);
  BOOST_TEST(!back.gradcheck);
  BOOST_TEST((back.devices == std::vector<int32_t>{2, 3}));
}

BOOST_AUTO_TEST_SUITE_END()
