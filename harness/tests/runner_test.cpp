// The runner and verifier end to end through real plugins.
#include <dlfcn.h>

#include <boost/test/unit_test.hpp>
#include <cmath>

#include "abi_vocabulary.hpp"
#include "backend_runner.hpp"
#include "bench_runner.hpp"
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

// How many times a prepare_plugin.cpp module's prepare() and release() have run.
std::pair<long, long> prepare_counts(const loaded_backend& b) {
  using counts_fn = void (*)(long*, long*);
  const auto counts = reinterpret_cast<counts_fn>(dlsym(b.library.get(), "prepare_plugin_counts"));
  BOOST_REQUIRE(counts);
  long prepares = 0, releases = 0;
  counts(&prepares, &releases);
  return {prepares, releases};
}

// A small bench of `b` on one gla fp64 shape, fwd and fwdbwd, in this process.
bench_results small_bench(const loaded_backend& b, std::vector<int32_t> devices = {0}) {
  bench_options o;
  o.backends = {&b};
  o.shapes = {{1, 32, 2, 8, 8}};
  o.warmup = 1;
  o.stopping = {0.005, 3, 5, 0.05};
  o.devices = std::move(devices);
  return run_bench(o);
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

// A plugin that fills its error buffer without a terminating NUL: the message is the
// buffer's first capacity − 1 bytes, and nothing after them (plugin_message.hpp).
BOOST_AUTO_TEST_CASE(an_unterminated_message_is_cut_at_the_buffer) {
  const loaded_backend unterminated = test_plugin("unterminated");
  const fixture f = recipe_fixture("gla_forward_only");
  std::string letters;  // what the plugin wrote: 2048 letters, the buffer's capacity
  for (size_t i = 0; i < 2048; ++i) letters += char('a' + i % 26);
  const std::string expected =
      "test_unterminated forward failed (runtime error): " + letters.substr(0, 2047);
  backend_runner runner(unterminated, f.prob, dtype::fp64, true, false);
  try {
    runner.forward(f.inputs);
    BOOST_FAIL("the forward's error was not reported");
  } catch (const backend_call_error& e) {
    BOOST_TEST(std::string(e.what()) == expected);
  }
  const verify_case_result r = verify_case(unterminated, f, dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(r.message.ends_with(expected), r.message);
}

BOOST_AUTO_TEST_CASE(unsupported_dtype_is_skipped_not_failed) {
  // The varlen plugin has gla in fp64, fp32 and bf16, not fp16.
  const loaded_backend b =
      load_backend(std::string(TEST_PLUGIN_DIR "/glabench_backend_test_varlen_state_fp32.so"));
  const verify_case_result r = verify_case(b, recipe_fixture("gla_basic"), dtype::fp16, {});
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

// ABI 1.2: the backend's prepare() runs after every upload and before the calls that use
// those tensors (the test_prepared plugin fails any call on tensors it was not prepared
// with), with the backward's arguments before a backward; release() when the runner goes.
BOOST_AUTO_TEST_CASE(prepare_runs_before_the_calls_and_release_after_them) {
  const loaded_backend prepared = test_plugin("prepared");
  const fixture f = recipe_fixture("gla_basic");  // fp64 gradients: with the gradient check
  const auto [prepares_before, releases_before] = prepare_counts(prepared);
  const verify_case_result r = verify_case(prepared, f, dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "passed", r.message);
  BOOST_REQUIRE(r.gradcheck.has_value());
  BOOST_TEST(r.gradcheck->passed);
  BOOST_TEST((r.devices == std::vector<int32_t>{0}));
  const auto [prepares, releases] = prepare_counts(prepared);
  BOOST_TEST(prepares - prepares_before > 2);   // forward, backward, each gradcheck call
  BOOST_TEST(releases - releases_before == 1);  // one runner, one problem

  {
    backend_runner runner(prepared, f.prob, dtype::fp64, true, true);
    BOOST_TEST(!runner.last_call_report().has_value());  // no call yet: nothing to say
    runner.backward(f.inputs);
    const std::optional<std::string> report = runner.last_call_report();
    BOOST_REQUIRE(report.has_value());
    const nlohmann::json j = nlohmann::json::parse(*report);
    BOOST_TEST(j.at("last_call") == "backward");
    BOOST_TEST(j.at("prepared_mode") == "backward");
  }
  BOOST_TEST(prepare_counts(prepared).second - releases == 1);
}

BOOST_AUTO_TEST_CASE(a_failing_prepare_fails_the_case_with_its_message) {
  const loaded_backend bad = test_plugin("prepare_fails");
  const verify_case_result r = verify_case(bad, recipe_fixture("gla_basic"), dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "failed");
  BOOST_TEST(r.message.find("prepare failed (runtime error)") != std::string::npos, r.message);
  BOOST_TEST(
      r.message.find("deliberate prepare failure: the shards do not fit") != std::string::npos,
      r.message);
  const bench_results b = small_bench(bad);
  BOOST_REQUIRE_EQUAL(b.rows.size(), 2u);
  for (const bench_row& row : b.rows) {
    BOOST_TEST(bench_status_name(row.status) == "failed");
    BOOST_TEST(row.message.find("deliberate prepare failure") != std::string::npos, row.message);
  }
}

// A plugin built against ABI 1.1 ends its table at build; what its memory holds after it
// (here: tripwires that fail, abort or report) is never read.
BOOST_AUTO_TEST_CASE(a_1_1_table_runs_without_the_1_2_members) {
  const loaded_backend old = test_plugin("abi_1_1");
  const fixture f = recipe_fixture("gla_basic");
  const verify_case_result r = verify_case(old, f, dtype::fp64, {});
  BOOST_TEST(case_status_name(r.status) == "passed", r.message);
  {
    backend_runner runner(old, f.prob, dtype::fp64, true, false);
    runner.forward(f.inputs);
    BOOST_TEST(!runner.last_call_report().has_value());
  }  // release() not called: it would abort
  const bench_results b = small_bench(old);
  for (const bench_row& row : b.rows) {
    BOOST_TEST(bench_status_name(row.status) == "ok", row.message);
    BOOST_TEST(row.backend_report.is_null());
  }
}

// bench records the backend's report on its last timed call, and a report that is not a
// JSON object as a warning, never a failure.
BOOST_AUTO_TEST_CASE(bench_records_the_backend_report) {
  const loaded_backend prepared = test_plugin("prepared");
  const bench_results b = small_bench(prepared);
  BOOST_REQUIRE_EQUAL(b.rows.size(), 2u);
  for (const bench_row& row : b.rows) {
    BOOST_TEST(bench_status_name(row.status) == "ok", row.message);
    BOOST_TEST((row.devices == std::vector<int32_t>{0}));
    BOOST_REQUIRE(row.backend_report.is_object());
    BOOST_TEST(row.backend_report.at("last_call") ==
               (row.config.mode == "fwd" ? "forward" : "backward"));
    BOOST_TEST(row.backend_report.at("comm_hidden_fraction") == 0.93);
    // Every timed call since the one prepare: the quick verify's, the warm-up's, the samples'.
    BOOST_TEST(row.backend_report.at("calls_since_prepare").get<size_t>() >=
               (row.config.mode == "fwd" ? 1 : 2) * (2 + row.samples_ms.size()));
  }
  BOOST_TEST(!b.context.contains("warnings"));

  const loaded_backend bad = test_plugin("bad_report");
  const bench_results w = small_bench(bad);
  for (const bench_row& row : w.rows) {
    BOOST_TEST(bench_status_name(row.status) == "ok", row.message);
    BOOST_TEST(row.backend_report.is_null());
    BOOST_TEST(row.message.starts_with("backend_report ignored: last_call_report wrote text that "
                                       "is not JSON: 'rank_ms: [0.5, 0.6'"),
               row.message);
  }
  BOOST_REQUIRE(w.context.contains("warnings"));
  BOOST_TEST(w.context["warnings"].size() == 2u);
  BOOST_TEST(w.context["warnings"][0].get<std::string>().find("backend_report ignored") !=
             std::string::npos);
}

// A host backend runs on the host with one device listed, whichever; with more its cases
// are skipped (unsupported), never failed, and the rows say how many were asked for.
BOOST_AUTO_TEST_CASE(a_host_backend_given_several_devices_is_skipped) {
  const loaded_backend prepared = test_plugin("prepared");
  const fixture f = recipe_fixture("gla_basic");
  try {
    backend_runner runner(prepared, f.prob, dtype::fp64, true, false, {0, 1});
    BOOST_ERROR("a host backend accepted two devices");
  } catch (const backend_call_error& e) {
    BOOST_TEST(e.refused_beforehand());
    BOOST_TEST(std::string(e.what()).find("a host backend runs on one device") !=
               std::string::npos);
  }
  {
    // One device, not 0: the host backend is given device 0 (test_prepared checks it).
    backend_runner runner(prepared, f.prob, dtype::fp64, true, false, {1});
    BOOST_TEST((runner.device_ids() == std::vector<int32_t>{0}));
    runner.forward(f.inputs);
  }
  verify_options two;
  two.devices = {0, 1};
  const verify_case_result r = verify_case(prepared, f, dtype::fp64, two);
  BOOST_TEST(case_status_name(r.status) == "unsupported");
  BOOST_TEST((r.devices == std::vector<int32_t>{0, 1}));
  const bench_results b = small_bench(prepared, {0, 1});
  BOOST_REQUIRE_EQUAL(b.rows.size(), 2u);
  for (const bench_row& row : b.rows) {
    BOOST_TEST(bench_status_name(row.status) == "skipped");
    BOOST_TEST(row.config.num_devices == 2);
    BOOST_TEST((row.devices == std::vector<int32_t>{0, 1}));
    BOOST_TEST(row.config.name().ends_with("/B1_T32_H2_K8_V8/x2/gates-mild"), row.config.name());
  }
}

// bench --mask: each softmax_attn configuration runs once per mask, verified against the
// reference of its own mask (one input set serves both), its flops those of its mask;
// gla, causal by nature, runs once whatever the masks.
BOOST_AUTO_TEST_CASE(softmax_attn_runs_once_per_mask) {
  const loaded_backend softmax = test_plugin("softmax");
  bench_options o;
  o.backends = {&softmax};
  o.ops = {op_kind::softmax_attn, op_kind::gla};
  o.shapes = {{1, 32, 2, 8, 8}};
  o.dtypes = {dtype::fp64};
  o.modes = {"fwd"};
  o.masks = {"causal", "full"};
  o.warmup = 1;
  o.stopping = {0.005, 3, 5, 0.05};
  const std::vector<bench_config> planned = planned_configs(o);
  BOOST_REQUIRE_EQUAL(planned.size(), 3u);
  BOOST_TEST(planned[0].op == "gla");  // once, causal
  BOOST_TEST(planned[0].causal);
  BOOST_TEST(planned[1].op == "softmax_attn");
  BOOST_TEST(planned[1].causal);
  BOOST_TEST(planned[2].op == "softmax_attn");
  BOOST_TEST(!planned[2].causal);

  const bench_results r = run_bench(o);
  BOOST_REQUIRE_EQUAL(r.rows.size(), 3u);
  BOOST_TEST(bench_status_name(r.rows[0].status) == "skipped");  // no gla in this backend
  const bench_row& causal = r.rows[1];
  const bench_row& full = r.rows[2];
  for (const bench_row* row : {&causal, &full}) {
    BOOST_TEST(bench_status_name(row->status) == "ok", row->message);
    BOOST_REQUIRE_EQUAL(row->checks.size(), 2u);  // o and lse
    for (const tensor_check& c : row->checks) BOOST_TEST(c.passed, c.tensor << " " << c.rel_l2);
  }
  BOOST_TEST(causal.config.causal);
  BOOST_TEST(!full.config.causal);
  BOOST_TEST(full.config.name() == "test_softmax/softmax_attn/fp64/fwd/B1_T32_H2_K8_V8/full");
  // 4·T·T·D per head, halved when causal.
  BOOST_TEST(full.flops == 4.0 * 2 * 32 * 32 * 8);
  BOOST_TEST(causal.flops == full.flops / 2);
  BOOST_TEST(full.bytes == causal.bytes);
  BOOST_TEST(r.context["bench_options"]["masks"] == nlohmann::json({"causal", "full"}));

  // The default is causal only.
  bench_options causal_only = o;
  causal_only.masks = bench_options().masks;
  const std::vector<bench_config> by_default = planned_configs(causal_only);
  BOOST_REQUIRE_EQUAL(by_default.size(), 2u);
  BOOST_TEST(by_default[1].causal);

  // A backend that masks whatever it is told: its causal row passes, its full row fails
  // the quick verify — the full row is checked against the full reference.
  const loaded_backend always_causal = test_plugin("softmax_always_causal");
  o.backends = {&always_causal};
  o.ops = {op_kind::softmax_attn};
  const bench_results wrong = run_bench(o);
  BOOST_REQUIRE_EQUAL(wrong.rows.size(), 2u);
  BOOST_TEST(wrong.rows[0].config.causal);
  BOOST_TEST(bench_status_name(wrong.rows[0].status) == "ok", wrong.rows[0].message);
  BOOST_TEST(!wrong.rows[1].config.causal);
  BOOST_TEST(bench_status_name(wrong.rows[1].status) == "failed");
  BOOST_TEST(wrong.rows[1].message.starts_with("quick verify failed: "), wrong.rows[1].message);
}

BOOST_AUTO_TEST_SUITE_END()

// ABI 1.5: packed variable-length batches and fp32 states (docs/design.md §3).
namespace {

// f's B rows as one packed row of B·T tokens, sequence b its row b: the same values in
// the same memory order, so the same expected results (du sums over them either way).
fixture packed_rows(fixture f) {
  const int64_t B = f.prob.B, T = f.prob.T;
  for (int64_t b = 0; b <= B; ++b) f.prob.cu_seqlens.push_back(b * T);
  f.prob.B = 1;
  f.prob.T = B * T;
  auto flatten = [&](tensor& t) {
    if (!t.empty()) t.shape = {1, B * T, t.shape[2], t.shape[3]};
  };
  for (tensor* t : {&f.inputs.q, &f.inputs.k, &f.inputs.v, &f.inputs.g, &f.expected.o}) flatten(*t);
  if (f.inputs.d_o) flatten(*f.inputs.d_o);
  if (f.expected_grads)
    for (tensor* t : {&f.expected_grads->dq, &f.expected_grads->dk, &f.expected_grads->dv,
                      &f.expected_grads->dg})
      flatten(*t);
  f.path = "packed_" + f.path;
  return f;
}

// Tokens [t0, t0 + n) of a [1,T,H,X] tensor, and row r of a [N,...] state.
tensor token_rows(const tensor& t, int64_t t0, int64_t n) {
  const int64_t per_token = t.shape[2] * t.shape[3];
  tensor out({1, n, t.shape[2], t.shape[3]});
  std::copy_n(t.ptr() + t0 * per_token, n * per_token, out.ptr());
  return out;
}
tensor state_row(const tensor& t, int64_t r) {
  std::vector<int64_t> shape = t.shape;
  shape[0] = 1;
  tensor out(shape);
  std::copy_n(t.ptr() + r * out.numel(), out.numel(), out.ptr());
  return out;
}

std::string seen_by(const loaded_backend& b) {
  using seen_fn = const char* (*)();
  const auto seen = reinterpret_cast<seen_fn>(dlsym(b.library.get(), "varlen_plugin_seen"));
  BOOST_REQUIRE(seen);
  return seen();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(abi_1_5)

// A table of 1.4 holds no features: never offered a packed batch (its case unsupported
// with the reason, before any of its code runs), still verified on the others. Past
// its end it holds every feature: a harness that read them would offer it.
BOOST_AUTO_TEST_CASE(an_earlier_table_is_never_offered_a_packed_batch) {
  const fixture f = recipe_fixture("gla_basic");
  for (const char* variant : {"abi_1_4", "abi_1_0", "features_none"}) {
    BOOST_TEST_CONTEXT(variant) {
      const loaded_backend old = test_plugin(variant);
      BOOST_TEST(old.features() == 0u);
      BOOST_TEST((old.state_dtype(dtype::bf16) == dtype::bf16));
      const verify_case_result r = verify_case(old, packed_rows(f), dtype::fp64, {});
      BOOST_TEST(case_status_name(r.status) == "unsupported");
      BOOST_TEST(r.message ==
                 "no packed variable-length batches (ABI 1.5 feature GLABENCH_FEATURE_VARLEN)");
    }
  }
  const verify_case_result plain = verify_case(test_plugin("abi_1_4"), f, dtype::fp64, {});
  BOOST_TEST(case_status_name(plain.status) == "passed", plain.message);
  BOOST_TEST((plain.state_storage == dtype::fp64));
}

// A backend with GLABENCH_FEATURE_VARLEN gets num_seqs, the offsets (int32) on their own
// tensor, and states of N rows; with GLABENCH_FEATURE_STATE_FP32 at bf16 they are fp32:
// h0 comes back through ht (and dht through dh0) with fp32's precision, not bf16's.
BOOST_AUTO_TEST_CASE(a_packed_batch_and_fp32_states_reach_a_backend_that_declares_them) {
  const loaded_backend b = test_plugin("varlen_state_fp32");
  BOOST_TEST(b.features() == (GLABENCH_FEATURE_VARLEN | GLABENCH_FEATURE_STATE_FP32));
  fixture f = packed_rows(recipe_fixture("gla_basic"));  // B2 T16 H2 K8 V8 → B1 T32, N 2
  f.prob.cu_seqlens = {0, 5, 19, 32};                    // three sequences of 5, 14, 13
  f.inputs.h0 = tensor({3, 2, 8, 8});
  f.inputs.dht = tensor({3, 2, 8, 8});
  for (int64_t i = 0; i < f.inputs.h0->numel(); ++i) {
    f.inputs.h0->data[size_t(i)] = 1.0 + 1e-4 * double(i);  // between bf16's steps
    f.inputs.dht->data[size_t(i)] = -1.0 - 1e-4 * double(i);
  }
  backend_runner runner(b, f.prob, dtype::bf16, true, true);
  const op_outputs out = runner.forward(f.inputs);
  BOOST_TEST(seen_by(b) ==
             "fwd B=1 T=32 num_seqs=3 state=float32 seqlens=int32 cu_seqlens=0,5,19,32 "
             "h0=[3,2,8,8]float32 ht=[3,2,8,8]float32");
  BOOST_TEST(out.ht.data == round_to(*f.inputs.h0, dtype::fp32).data);
  BOOST_TEST(out.ht.data != round_to(*f.inputs.h0, dtype::bf16).data);
  const op_gradients grads = runner.backward(f.inputs);
  BOOST_TEST(seen_by(b) ==
             "bwd B=1 T=32 num_seqs=3 state=float32 seqlens=int32 cu_seqlens=0,5,19,32 "
             "h0=[3,2,8,8]float32 dht=[3,2,8,8]float32 dh0=[3,2,8,8]float32");
  BOOST_TEST(grads.dh0.data == round_to(*f.inputs.dht, dtype::fp32).data);

  // Not packed, and at fp32 storage: the fields say so, the states are the storage's.
  backend_runner plain(b, recipe_fixture("gla_basic").prob, dtype::fp32, true, false);
  plain.forward(recipe_fixture("gla_basic").inputs);
  BOOST_TEST(seen_by(b) ==
             "fwd B=2 T=16 num_seqs=0 state=float32 cu_seqlens=none "
             "h0=[2,2,8,8]float32 ht=[2,2,8,8]float32");
  // A backend without the feature gets bf16 states at bf16.
  const loaded_backend none = test_plugin("features_none");
  backend_runner bf16(none, recipe_fixture("gla_basic").prob, dtype::bf16, true, false);
  bf16.forward(recipe_fixture("gla_basic").inputs);
  BOOST_TEST(seen_by(none) ==
             "fwd B=2 T=16 num_seqs=0 state=bfloat16 cu_seqlens=none "
             "h0=[2,2,8,8]bfloat16 ht=[2,2,8,8]bfloat16");
  // verify rounds h0 to the state dtype and records it.
  const verify_case_result r =
      verify_case(b, packed_rows(recipe_fixture("gla_basic")), dtype::bf16, {});
  BOOST_TEST((r.state_storage == dtype::fp32));
}

// naive_recurrent computes a packed batch as its sequences one by one: each from its own
// h0 row, ending in its own ht row, du summed; and the head downloads take sequences.
BOOST_AUTO_TEST_CASE(naive_computes_a_packed_batch_sequence_by_sequence) {
  const loaded_backend naive = load_backend(NAIVE_BACKEND_PATH);
  BOOST_TEST(feature_names(naive.features()) == "varlen, fp32 state");
  for (const char* name : {"gla_basic", "rwkv6_basic"}) {
    BOOST_TEST_CONTEXT(name) {
      // Equal lengths: the fixture's own expected values, and the finite differences.
      const fixture equal = packed_rows(recipe_fixture(name));
      const verify_case_result r = verify_case(naive, equal, dtype::fp64, {});
      BOOST_TEST(case_status_name(r.status) == "passed", r.message);
      BOOST_TEST((r.gradcheck && r.gradcheck->passed));

      fixture f = equal;
      f.prob.cu_seqlens = {0, 1, 13, 32};
      const int64_t N = 3;
      f.inputs.h0 = tensor({N, f.prob.H, f.prob.K, f.prob.V});
      f.inputs.dht = *f.inputs.h0;
      for (int64_t i = 0; i < f.inputs.h0->numel(); ++i) {
        f.inputs.h0->data[size_t(i)] = 0.01 * double(i % 17);
        f.inputs.dht->data[size_t(i)] = 0.02 * double(i % 13) - 0.1;
      }
      backend_runner runner(naive, f.prob, dtype::fp64, true, true);
      const op_outputs out = runner.forward(f.inputs);
      const op_gradients grads = runner.backward(f.inputs);
      tensor du_sum(f.prob.u_shape());
      for (int64_t n = 0; n < N; ++n) {
        BOOST_TEST_CONTEXT("sequence " << n) {
          const int64_t t0 = f.prob.cu_seqlens[size_t(n)];
          const int64_t len = f.prob.cu_seqlens[size_t(n) + 1] - t0;
          problem one = f.prob;
          one.cu_seqlens.clear();
          one.T = len;
          op_inputs x;
          x.q = token_rows(f.inputs.q, t0, len);
          x.k = token_rows(f.inputs.k, t0, len);
          x.v = token_rows(f.inputs.v, t0, len);
          x.g = token_rows(f.inputs.g, t0, len);
          x.u = f.inputs.u;
          x.h0 = state_row(*f.inputs.h0, n);
          x.d_o = token_rows(*f.inputs.d_o, t0, len);
          x.dht = state_row(*f.inputs.dht, n);
          backend_runner alone(naive, one, dtype::fp64, true, true);
          const op_outputs want = alone.forward(x);
          const op_gradients want_grads = alone.backward(x);
          BOOST_TEST(token_rows(out.o, t0, len).data == want.o.data);
          BOOST_TEST(state_row(out.ht, n).data == want.ht.data);
          BOOST_TEST(token_rows(grads.dq, t0, len).data == want_grads.dq.data);
          BOOST_TEST(token_rows(grads.dk, t0, len).data == want_grads.dk.data);
          BOOST_TEST(token_rows(grads.dv, t0, len).data == want_grads.dv.data);
          BOOST_TEST(token_rows(grads.dg, t0, len).data == want_grads.dg.data);
          BOOST_TEST(state_row(grads.dh0, n).data == want_grads.dh0.data);
          if (f.prob.has_bonus())
            for (int64_t i = 0; i < du_sum.numel(); ++i)
              du_sum.data[size_t(i)] += want_grads.du.data[size_t(i)];
          // The head downloads of sequence n: its tokens and its state row.
          for (int64_t h = 0; h < f.prob.H; ++h) {
            const op_outputs head = runner.download_head_outputs(n, h);
            BOOST_TEST((head.o.shape == std::vector<int64_t>{1, len, 1, f.prob.V}));
            BOOST_TEST(head.o.data[0] == want.o.data[size_t(h * f.prob.V)]);
            BOOST_TEST(head.ht.data[0] == want.ht.data[size_t(h * f.prob.K * f.prob.V)]);
          }
        }
      }
      if (f.prob.has_bonus()) {
        const double scale = l2_norm(du_sum);
        for (int64_t i = 0; i < du_sum.numel(); ++i)
          BOOST_TEST(std::abs(grads.du.data[size_t(i)] - du_sum.data[size_t(i)]) <= 1e-13 * scale);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
