// compare's verdicts and the regression gate on synthetic results, the results JSON
// round trip and its validation, and the backend knobs a results file records.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench_printer.hpp"
#include "comparison_printer.hpp"
#include "json_depth.hpp"
#include "op_cost.hpp"
#include "report_printer.hpp"
#include "run_context.hpp"

using namespace glabench;

namespace glabench {  // how Boost.Test prints them
std::ostream& operator<<(std::ostream& out, verdict v) {
  return out << verdict_name(v);
}
std::ostream& operator<<(std::ostream& out, const bench_config& c) {
  return out << c.name();
}
}  // namespace glabench

namespace {

// Samples around `center` with a ±1% spread, in a fixed shuffled order.
std::vector<double> samples(double center, size_t n = 20) {
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(center * (1 + 0.01 * (double((i * 7) % n) / n - 0.5)));
  return out;
}

bench_row timed_row(const std::string& backend, int64_t T, std::vector<double> ms) {
  bench_row r;
  r.config = {backend, "gla", "bf16", "fwd", 4, T, 16, 128, 128, false};
  r.config.gates = "mild";  // what a gla row is read back as
  r.ran_on = "cuda";
  r.samples_ms = std::move(ms);
  r.stats = summarize(r.samples_ms);
  r.checks = {{"o", 1.2e-3, 1e-2, true}};
  r.bytes = 1e8;
  r.flops = 1e10;
  r.gbps = 100;
  r.tflops = 10;
  r.bandwidth_fraction = 0.02;
  r.wall_s = 1.5;
  return r;
}

bench_row failed_row(const std::string& backend, int64_t T) {
  bench_row r = timed_row(backend, T, {1.0});
  r.samples_ms.clear();
  r.stats.reset();
  r.status = bench_status::failed;
  r.message = "quick verify failed: o rel_l2 0.5 > 0.01";
  r.checks = {{"o", 0.5, 1e-2, false}};
  r.gbps = r.tflops = r.bandwidth_fraction = std::nullopt;
  return r;
}

bench_results results_with(std::vector<bench_row> rows) {
  bench_results r;
  r.context = {{"device", "NVIDIA H200"}, {"git_commit", "abc"}, {"date", "2026-11-22"}};
  r.peaks["cuda"].copy_gbps = 4000;
  r.peaks["cuda"].gemm_tflops = {{"bf16", 700.0}};
  r.peaks["cuda"].notes = "synthetic";
  r.rows = std::move(rows);
  return r;
}

verdict only_verdict(const bench_results& base, const bench_results& next) {
  const comparison c = compare_results(base, next, {});
  BOOST_REQUIRE_EQUAL(c.rows.size(), 1u);
  return c.rows[0].status;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compare)

BOOST_AUTO_TEST_CASE(a_noise_sized_change_is_same) {
  const auto base = results_with({timed_row("k", 2048, samples(1.0))});
  const auto next = results_with({timed_row("k", 2048, samples(1.01))});
  BOOST_TEST(only_verdict(base, next) == verdict::same);
  BOOST_TEST(regression_exit_code(compare_results(base, next, {}), 0) == 0);
}

BOOST_AUTO_TEST_CASE(a_real_slowdown_is_slower_and_fails_the_gate) {
  const auto base = results_with({timed_row("k", 2048, samples(1.0))});
  const auto next = results_with({timed_row("k", 2048, samples(1.3))});
  const comparison c = compare_results(base, next, {});
  BOOST_TEST(c.rows[0].status == verdict::slower);
  BOOST_TEST(*c.rows[0].ratio == 1.3, boost::test_tools::tolerance(1e-3));
  BOOST_TEST(*c.rows[0].p_value < 0.05);
  BOOST_TEST(regression_exit_code(c, 5) == 1);
  BOOST_TEST(regression_exit_code(c, 50) == 0);  // slower, but within the allowed 50%
}

BOOST_AUTO_TEST_CASE(a_speedup_is_faster_and_never_fails) {
  const auto base = results_with({timed_row("k", 2048, samples(1.0))});
  const auto next = results_with({timed_row("k", 2048, samples(0.5))});
  const comparison c = compare_results(base, next, {});
  BOOST_TEST(c.rows[0].status == verdict::faster);
  BOOST_TEST(regression_exit_code(c, 0) == 0);
  BOOST_REQUIRE_EQUAL(c.summaries.size(), 2u);  // backend k, then overall
  BOOST_TEST(c.summaries[0].geomean_speedup == 2.0, boost::test_tools::tolerance(1e-3));
}

BOOST_AUTO_TEST_CASE(a_correctness_loss_fails_the_gate) {
  const auto base = results_with({timed_row("k", 2048, samples(1.0))});
  const auto next = results_with({failed_row("k", 2048)});
  const comparison c = compare_results(base, next, {});
  BOOST_TEST(c.rows[0].status == verdict::broken);
  BOOST_TEST(regression_exit_code(c, 1000) == 1);
  // Failing on both sides is reported, but is no new regression (beside a row timed in
  // both; with none, the gate compared nothing and fails: gate_fails_when_nothing_…).
  BOOST_TEST(only_verdict(next, next) == verdict::failed);
  const auto both = results_with({failed_row("k", 2048), timed_row("k", 4096, samples(1.0))});
  BOOST_TEST(regression_exit_code(compare_results(both, both, {}), 0) == 0);
  BOOST_TEST(only_verdict(next, base) == verdict::fixed);
}

BOOST_AUTO_TEST_CASE(cpu_rows_have_a_wider_drift_floor) {
  // 6% slower with a tight spread: significant on a GPU, within the host's drift floor.
  auto base = results_with({timed_row("k", 2048, samples(1.0))});
  auto next = results_with({timed_row("k", 2048, samples(1.06))});
  BOOST_TEST(only_verdict(base, next) == verdict::slower);
  base.rows[0].ran_on = next.rows[0].ran_on = "host";
  BOOST_TEST(only_verdict(base, next) == verdict::same);
  next = results_with({timed_row("k", 2048, samples(1.3))});
  next.rows[0].ran_on = "host";
  BOOST_TEST(only_verdict(base, next) == verdict::slower);
}

BOOST_AUTO_TEST_CASE(a_noisy_run_widens_what_counts_as_same) {
  // 40% spread in the new run: a 15% shift of the median is within its noise.
  std::vector<double> noisy;
  for (double x : samples(1.15)) noisy.push_back(x * (noisy.size() % 2 ? 1.2 : 0.8));
  const auto base = results_with({timed_row("k", 2048, samples(1.0))});
  const auto next = results_with({timed_row("k", 2048, noisy)});
  BOOST_TEST(only_verdict(base, next) == verdict::same);
}

BOOST_AUTO_TEST_CASE(few_samples_decide_by_spread_overlap) {
  const auto base = results_with({timed_row("k", 2048, samples(1.0, 3))});
  const auto slower = results_with({timed_row("k", 2048, samples(1.2, 3))});
  const comparison c = compare_results(base, slower, {});
  BOOST_TEST(c.rows[0].status == verdict::slower);
  BOOST_TEST(!c.rows[0].p_value.has_value());  // no U test under 5 samples
}

BOOST_AUTO_TEST_CASE(rows_are_matched_by_configuration) {
  const auto base =
      results_with({timed_row("k", 1024, samples(1.0)), timed_row("k", 2048, samples(2.0))});
  const auto next =
      results_with({timed_row("k", 2048, samples(2.0)), timed_row("k", 4096, samples(4.0))});
  const comparison c = compare_results(base, next, {});
  BOOST_REQUIRE_EQUAL(c.rows.size(), 3u);
  BOOST_TEST(c.rows[0].status == verdict::gone);
  BOOST_TEST(c.rows[1].status == verdict::same);
  BOOST_TEST(c.rows[2].status == verdict::added);
  std::ostringstream md;
  comparison_printer::print_markdown(md, c);
  BOOST_TEST(
      md.str().find("| k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild | 2 | 2 | 1.000 |") !=
      std::string::npos);
}

BOOST_AUTO_TEST_CASE(backend_knobs_are_recorded_and_shown) {
  // A backend's knobs are the environment variables its table names (ABI 1.4,
  // run_context.hpp): exactly those, where set; never one that merely shares their prefix.
  setenv("PARALLEL_SCAN_CUDA_FP32_STATE", "64", 1);
  setenv("PARALLEL_SCAN_CUDA_SECRET", "1", 1);  // named after the backend, but not a knob
  setenv("PARALLEL_SCAN_CUDAX", "1", 1);
  loaded_backend scan;
  scan.knobs = {"PARALLEL_SCAN_CUDA_WIDTH", "PARALLEL_SCAN_CUDA_FP32_STATE"};
  const nlohmann::json env = backend_environment(scan.knobs);
  const nlohmann::json context = run_context({&scan});
  for (const char* name :
       {"PARALLEL_SCAN_CUDA_FP32_STATE", "PARALLEL_SCAN_CUDA_SECRET", "PARALLEL_SCAN_CUDAX"})
    unsetenv(name);
  BOOST_TEST(env == nlohmann::json({{"PARALLEL_SCAN_CUDA_FP32_STATE", "64"}}));
  BOOST_TEST(context.at("backend_environment") == env);

  // compare shows them beside each side's commit, so that such runs are not mistaken for
  // the same configuration.
  const auto base = results_with({timed_row("k", 2048, samples(1.0))});
  auto next = base;
  next.context["backend_environment"] = {{"PARALLEL_SCAN_CUDA_FP32_STATE", "64"}};
  std::ostringstream md;
  comparison_printer::print_markdown(md, compare_results(base, next, {}));
  BOOST_TEST(md.str().find("**base:** NVIDIA H200 · commit abc · 2026-11-22  \n") !=
             std::string::npos);
  BOOST_TEST(md.str().find("**new:** NVIDIA H200 · commit abc · 2026-11-22 · "
                           "`PARALLEL_SCAN_CUDA_FP32_STATE=64`\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_backend_of_another_version_is_named) {
  // Results files record each backend's version (backend_build.hpp); compare names those
  // that differ between the runs, and only those both runs record.
  auto base = results_with({timed_row("k", 2048, samples(1.0))});
  base.context["backend_builds"] = {{"fla", {{"version", "fla-core 0.5.0"}}},
                                    {"ours", {{"version", "1.0"}}},
                                    {"gone", {{"version", "1"}}}};
  auto next = base;
  next.context["backend_builds"]["fla"]["version"] = "fla-core 0.6.0\x1b[2J";
  next.context["backend_builds"].erase("gone");
  BOOST_TEST(comparison_printer::changed_versions(base.context, next.context) ==
             "`fla` fla-core 0.5.0 → fla-core 0.6.0\\x1b[2J");
  BOOST_TEST(comparison_printer::changed_versions(base.context, base.context).empty());
  BOOST_TEST(comparison_printer::changed_versions(nlohmann::json::object(), next.context).empty());
  std::ostringstream md;
  comparison_printer::print_markdown(md, compare_results(base, next, {}));
  BOOST_TEST(md.str().find("**versions differ:** `fla` fla-core 0.5.0 → fla-core 0.6.0") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(rows_skipped_on_one_side_and_absent_on_the_other_are_left_out) {
  bench_row skipped_row = failed_row("k", 1024);
  skipped_row.status = bench_status::skipped;
  skipped_row.message = "no rwkv6 forward in bf16";
  const auto base = results_with({timed_row("k", 2048, samples(1.0)), skipped_row});
  const auto next = results_with({timed_row("k", 2048, samples(1.0))});
  BOOST_TEST(compare_results(base, next, {}).rows.size() == 1u);
  BOOST_TEST(compare_results(next, base, {}).rows.size() == 1u);
  BOOST_TEST(compare_results(base, base, {}).rows.size() == 2u);  // skipped on both: SKIPPED
}

BOOST_AUTO_TEST_CASE(backend_filter_keeps_only_those_rows) {
  const auto base =
      results_with({timed_row("gpu", 2048, samples(1.0)), timed_row("cpu", 2048, samples(1.0))});
  const auto next =
      results_with({timed_row("gpu", 2048, samples(1.0)), timed_row("cpu", 2048, samples(2.0))});
  BOOST_TEST(regression_exit_code(compare_results(base, next, {}), 5) == 1);
  compare_options only_gpu;
  only_gpu.backends = {"gpu"};
  const comparison c = compare_results(base, next, only_gpu);
  BOOST_REQUIRE_EQUAL(c.rows.size(), 1u);
  BOOST_TEST(c.rows[0].config.backend == "gpu");
  BOOST_TEST(regression_exit_code(c, 5) == 0);
}

BOOST_AUTO_TEST_CASE(results_json_round_trips) {
  const auto r = results_with({timed_row("k", 2048, samples(1.0)), failed_row("j", 2048)});
  const bench_results back = bench_results_from_json(to_json(r), "mem");
  BOOST_REQUIRE_EQUAL(back.rows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    BOOST_TEST(back.rows[i].config == r.rows[i].config);
    BOOST_TEST(back.rows[i].samples_ms == r.rows[i].samples_ms);
    BOOST_TEST(back.rows[i].message == r.rows[i].message);
    BOOST_TEST(back.rows[i].checks.size() == r.rows[i].checks.size());
    BOOST_TEST(back.rows[i].gbps.has_value() == r.rows[i].gbps.has_value());
    BOOST_TEST(back.rows[i].wall_s.value_or(-1) == r.rows[i].wall_s.value_or(-2));
  }
  BOOST_TEST(*back.peaks.at("cuda").copy_gbps == 4000.0);
  BOOST_TEST(back.peaks.at("cuda").gemm_tflops["bf16"].get<double>() == 700.0);
  BOOST_TEST(to_json(back) == to_json(r));
}

// A row's devices (--devices) and the backend's report on its last timed call (ABI 1.2)
// round-trip; the device count is part of the configuration, so a 2-GPU row is never
// compared with a 1-GPU row; report and compare show them.
BOOST_AUTO_TEST_CASE(devices_and_backend_report_round_trip_and_key_the_configuration) {
  bench_row two = timed_row("ring", 2048, samples(0.6));
  two.config.num_devices = 2;
  two.devices = {2, 3};
  two.backend_report = {{"rank_ms", {0.5, 0.6}}, {"comm_hidden_fraction", 0.93}};
  const bench_row one = timed_row("ring", 2048, samples(1.0));
  BOOST_TEST(two.config.name() == "ring/gla/bf16/fwd/B4_T2048_H16_K128_V128/x2/gates-mild");
  BOOST_TEST(one.config.name() == "ring/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild");
  const bench_results both = results_with({one, two});  // one file holds both: not repeats
  const nlohmann::json j = to_json(both);
  BOOST_TEST(j["benchmarks"][1]["devices"] == nlohmann::json({2, 3}));
  BOOST_TEST(j["benchmarks"][1]["backend_report"]["comm_hidden_fraction"] == 0.93);
  BOOST_TEST(!j["benchmarks"][0].contains("backend_report"));
  for (const bench_results& back :
       {bench_results_from_json(j, "mem"), bench_results_from_text(j.dump(), "mem")}) {
    BOOST_REQUIRE_EQUAL(back.rows.size(), 2u);
    BOOST_TEST((back.rows[0].devices == std::vector<int32_t>{0}));
    BOOST_TEST(back.rows[0].backend_report.is_null());
    BOOST_TEST(back.rows[1].config == two.config);
    BOOST_TEST((back.rows[1].devices == std::vector<int32_t>{2, 3}));
    BOOST_TEST(back.rows[1].backend_report == two.backend_report);
    BOOST_TEST(to_json(back) == j);
  }
  // A file from before devices were recorded: one device, 0.
  nlohmann::json old = to_json(results_with({one}));
  old["benchmarks"][0].erase("devices");
  const bench_results read_old = bench_results_from_json(old, "old.json");
  BOOST_TEST((read_old.rows[0].devices == std::vector<int32_t>{0}));
  BOOST_TEST(read_old.rows[0].config == one.config);

  // 1 GPU against 2 GPUs: not the same configuration (GONE and NEW), whichever devices.
  const comparison c = compare_results(results_with({one}), results_with({two}), {});
  BOOST_REQUIRE_EQUAL(c.rows.size(), 2u);
  BOOST_TEST(c.rows[0].status == verdict::gone);
  BOOST_TEST(c.rows[1].status == verdict::added);
  bench_row two_elsewhere = two;
  two_elsewhere.devices = {0, 1};
  BOOST_TEST(only_verdict(results_with({two}), results_with({two_elsewhere})) == verdict::same);

  std::ostringstream md;
  report_printer::print_markdown(md, {{"run.json", both}}, "ring", {}, {});
  BOOST_TEST(
      md.str().find("| B4 T2048 H16 K128 V128 ×2 GPU gates:mild | ok |") != std::string::npos,
      md.str());
  BOOST_TEST(
      md.str().find(R"(backend report: {"comm_hidden_fraction":0.93,"rank_ms":[0.5,0.6]})") !=
          std::string::npos,
      md.str());
}

// bench's console shows the device count of a row given more than one device.
BOOST_AUTO_TEST_CASE(the_bench_table_shows_several_devices) {
  bench_row one = timed_row("ring", 2048, samples(1.0));
  bench_row two = one;
  two.config.num_devices = 2;
  two.devices = {0, 1};
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  BOOST_REQUIRE(out);
  {
    bench_printer table(out, {one.config, two.config}, console_style::with_colour(false));
    table.row(one);
    table.row(two);
    table.finish();
  }
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  BOOST_TEST(
      printed.find("fwd     B4 T2048 H16 K128 V128 gates:mild         ") != std::string::npos,
      printed);
  BOOST_TEST(
      printed.find("fwd     B4 T2048 H16 K128 V128 ×2 GPU gates:mild  ") != std::string::npos,
      printed);
}

// softmax_attn's mask (bench --mask) is part of a configuration's key: a full-mask row is
// written with "causal": false and named /full, never matched with the causal row of
// the same shape, and shown as "full" (the causal one as "causal") in bench's table and
// the report. Files from before the field was recorded hold causal rows.
namespace {
bench_row softmax_row(bool causal, double ms) {
  bench_row r = timed_row("attn", 2048, samples(ms));
  r.config.op = "softmax_attn";
  r.config.causal = causal;
  r.config.gates.clear();  // softmax_attn has no gates
  return r;
}
}  // namespace

// bench --gates and --timing: a row's gate regime and timing mode are part of its
// configuration, written, read back and named; compare never pairs two regimes or two
// timing modes; a gla row of a file from before either was recorded reads as mild, eager.
BOOST_AUTO_TEST_CASE(regimes_and_timing_modes_key_the_configuration) {
  const bench_row mild = timed_row("k", 2048, samples(1.0));
  bench_row fla = timed_row("k", 2048, samples(3.0)), graph = timed_row("k", 2048, samples(0.5));
  fla.config.gates = "fla";
  graph.config.timing = "graph";
  BOOST_TEST(fla.config.name() == "k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-fla");
  BOOST_TEST(graph.config.name() == "k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild/graph");
  BOOST_TEST(graph.config.label() == "B4 T2048 H16 K128 V128 gates:mild graph");
  const nlohmann::json j = to_json(results_with({mild, fla, graph}));
  BOOST_TEST(j["benchmarks"][1]["gates"] == "fla");
  BOOST_TEST(j["benchmarks"][2]["timing"] == "graph");
  for (const bench_results& back :
       {bench_results_from_json(j, "mem"), bench_results_from_text(j.dump(), "mem")}) {
    BOOST_REQUIRE_EQUAL(back.rows.size(), 3u);
    BOOST_TEST(back.rows[1].config == fla.config);
    BOOST_TEST(back.rows[2].config == graph.config);
  }
  for (const bench_row& other : {fla, graph}) {
    const comparison c = compare_results(results_with({mild}), results_with({other}), {});
    BOOST_REQUIRE_EQUAL(c.rows.size(), 2u);
    const bool apart = (c.rows[0].status == verdict::gone && c.rows[1].status == verdict::added) ||
                       (c.rows[0].status == verdict::added && c.rows[1].status == verdict::gone);
    BOOST_TEST(apart, other.config.name());
  }
  nlohmann::json old = to_json(results_with({mild}));
  old["benchmarks"][0].erase("gates");
  old["benchmarks"][0].erase("timing");
  for (const bench_results& back :
       {bench_results_from_json(old, "old.json"), bench_results_from_text(old.dump(), "old.json")})
    BOOST_TEST(back.rows[0].config == mild.config);
  // A regime nobody defined, or one on an op without gates, names the file and field.
  nlohmann::json bad = j;
  bad["benchmarks"][0]["gates"] = "gentle";
  BOOST_CHECK_EXCEPTION(bench_results_from_json(bad, "bad.json"), results_error,
                        [](const results_error& e) {
                          return std::string(e.what()).starts_with("bad.json: benchmarks[0].gates");
                        });
  bad = j;
  bad["benchmarks"][0]["timing"] = "host";
  BOOST_CHECK_THROW(bench_results_from_text(bad.dump(), "bad.json"), results_error);
}

BOOST_AUTO_TEST_CASE(the_mask_keys_the_configuration) {
  const bench_row causal = softmax_row(true, 1.0), full = softmax_row(false, 2.0);
  BOOST_TEST(causal.config.name() == "attn/softmax_attn/bf16/fwd/B4_T2048_H16_K128_V128");
  BOOST_TEST(full.config.name() == "attn/softmax_attn/bf16/fwd/B4_T2048_H16_K128_V128/full");
  BOOST_TEST(causal.config.mask() == "causal");
  BOOST_TEST(full.config.mask() == "full");
  BOOST_TEST(!(causal.config == full.config));
  BOOST_TEST(bench_config_hash()(causal.config) != bench_config_hash()(full.config));
  {
    const std::vector<bench_row> rows = {causal, full};
    config_index index(rows);
    BOOST_TEST(index.insert(0) == config_index::npos);
    BOOST_TEST(index.insert(1) == config_index::npos);  // not a repeat of row 0
    BOOST_TEST(index.find(causal.config) == 0u);
    BOOST_TEST(index.find(full.config) == 1u);
  }

  // One file holds both (not repeats); "causal" is written and read back.
  const nlohmann::json j = to_json(results_with({causal, full}));
  BOOST_TEST(j["benchmarks"][0]["causal"] == true);
  BOOST_TEST(j["benchmarks"][1]["causal"] == false);
  BOOST_TEST(j["benchmarks"][1]["name"] == full.config.name());
  for (const bench_results& back :
       {bench_results_from_json(j, "mem"), bench_results_from_text(j.dump(), "mem")}) {
    BOOST_REQUIRE_EQUAL(back.rows.size(), 2u);
    BOOST_TEST(back.rows[0].config == causal.config);
    BOOST_TEST(back.rows[1].config == full.config);
    BOOST_TEST(!back.rows[1].config.causal);
  }

  // causal against full: GONE and NEW, never a ratio between them.
  const comparison apart = compare_results(results_with({causal}), results_with({full}), {});
  BOOST_REQUIRE_EQUAL(apart.rows.size(), 2u);
  BOOST_TEST(apart.rows[0].status == verdict::gone);
  BOOST_TEST(apart.rows[0].config.causal);
  BOOST_TEST(apart.rows[1].status == verdict::added);
  BOOST_TEST(!apart.rows[1].config.causal);
  BOOST_TEST(!apart.rows[0].ratio.has_value());
  // Both on both sides, in another order: each matched with its own mask (full is twice
  // causal's time: a cross match would give a ratio of 2 or 0.5).
  const comparison both =
      compare_results(results_with({causal, full}), results_with({full, causal}), {});
  BOOST_REQUIRE_EQUAL(both.rows.size(), 2u);
  for (const compare_row& row : both.rows) {
    BOOST_TEST(row.status == verdict::same);
    BOOST_TEST(row.base->config.causal == row.next->config.causal);
    BOOST_TEST(*row.ratio == 1.0);
  }
  BOOST_TEST(judge_gate(both, {5}).passed());
  const nlohmann::json cj = comparison_printer::to_json(both, std::nullopt);
  BOOST_TEST(cj["rows"][0]["causal"] == true);
  BOOST_TEST(cj["rows"][1]["causal"] == false);
  BOOST_TEST(cj["rows"][1]["name"] == full.config.name());
  std::ostringstream md;
  comparison_printer::print_markdown(md, both);
  BOOST_TEST(md.str().find("| attn/softmax_attn/bf16/fwd/B4_T2048_H16_K128_V128/full | 2 | 2 |") !=
                 std::string::npos,
             md.str());

  // The report and the bench table show the mask of every softmax_attn row.
  std::ostringstream report;
  report_printer::print_markdown(report, {{"run.json", results_with({causal, full})}}, "attn", {},
                                 {});
  BOOST_TEST(
      report.str().find("| softmax_attn | bf16 | fwd | B4 T2048 H16 K128 V128 causal | ok |") !=
          std::string::npos,
      report.str());
  BOOST_TEST(
      report.str().find("| softmax_attn | bf16 | fwd | B4 T2048 H16 K128 V128 full | ok |") !=
          std::string::npos,
      report.str());
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  BOOST_REQUIRE(out);
  {
    bench_printer table(out, {causal.config, full.config}, console_style::with_colour(false));
    table.row(causal);
    table.row(full);
    table.finish();
  }
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  BOOST_TEST(printed.find("softmax_attn  bf16  fwd     B4 T2048 H16 K128 V128 causal  ") !=
                 std::string::npos,
             printed);
  BOOST_TEST(printed.find("softmax_attn  bf16  fwd     B4 T2048 H16 K128 V128 full    ") !=
                 std::string::npos,
             printed);
}

BOOST_AUTO_TEST_CASE(a_row_without_the_mask_field_is_causal) {
  // A results file from before the mask was recorded (the committed baselines): its rows
  // have no "causal" and are read as causal, matching a causal row of a new run.
  const bench_row causal = softmax_row(true, 1.0);
  nlohmann::json old = to_json(results_with({causal, timed_row("k", 2048, samples(1.0))}));
  for (auto& row : old["benchmarks"]) {
    BOOST_REQUIRE(row.contains("causal"));
    row.erase("causal");
  }
  for (const bench_results& back : {bench_results_from_json(old, "old.json"),
                                    bench_results_from_text(old.dump(), "old.json")}) {
    BOOST_REQUIRE_EQUAL(back.rows.size(), 2u);
    BOOST_TEST(back.rows[0].config.causal);
    BOOST_TEST(back.rows[0].config == causal.config);
    BOOST_TEST(back.rows[1].config.causal);
    BOOST_TEST(only_verdict(results_with({back.rows[0]}), results_with({causal})) == verdict::same);
  }
}

BOOST_AUTO_TEST_CASE(a_full_mask_costs_the_whole_square) {
  // softmax_attn B1 T4 H1 D2: 4·T·T·D = 128 flops full, half of it causal; 3.5× with the
  // backward. The bytes do not depend on the mask.
  problem p{op_kind::softmax_attn, 1, 4, 1, 2, 2, 1.0, false};
  const op_cost full = essential_cost(p, 8, 8, false, false);
  const op_cost full_bwd = essential_cost(p, 8, 8, false, true);
  p.causal = true;
  const op_cost causal = essential_cost(p, 8, 8, false, false);
  BOOST_TEST(full.flops == 128.0);
  BOOST_TEST(causal.flops == 64.0);
  BOOST_TEST(full_bwd.flops == 3.5 * 128.0);
  BOOST_TEST(full.bytes == causal.bytes);
}

BOOST_AUTO_TEST_CASE(a_nan_output_survives_the_round_trip) {
  bench_row r = failed_row("k", 2048);
  r.checks = {{"o", NAN, 1e-2, false}};
  const bench_results back = bench_results_from_json(to_json(results_with({r})), "mem");
  BOOST_TEST(std::isnan(back.rows[0].checks[0].rel_l2));
  std::ostringstream md;
  report_printer::print_markdown(md, {{"run.json", back}}, "k", {}, {});
  BOOST_TEST(md.str().find("non-finite") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(malformed_results_name_the_field_and_rule) {
  auto expect_error = [](nlohmann::json j, const std::string& needle) {
    try {
      bench_results_from_json(j, "f.json");
      BOOST_ERROR("accepted: " + needle);
    } catch (const results_error& e) {
      BOOST_TEST_INFO(e.what());
      BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  const nlohmann::json good = to_json(results_with({timed_row("k", 2048, samples(1.0))}));
  expect_error({{"benchmarks", nlohmann::json::array()}},
               "f.json: (top level).context: is missing");
  auto foreign = good;
  foreign["context"].erase("glabench_results");
  expect_error(foreign, "context.glabench_results: must be \"bench\"");
  auto bad = good;
  bad["benchmarks"][0]["samples_ms"] = {1.0, -2.0};
  expect_error(bad, "benchmarks[0].samples_ms: must hold positive finite numbers");
  bad = good;
  bad["benchmarks"][0]["mode"] = "backward";
  expect_error(bad, "benchmarks[0].mode: must be fwd or fwdbwd");
  bad = good;
  bad["benchmarks"][0].erase("T");
  expect_error(bad, "benchmarks[0].T: is missing");
  bad = good;
  bad["benchmarks"].push_back(bad["benchmarks"][0]);
  expect_error(bad, "benchmarks[1]: repeats the configuration");
  bad = good;
  bad["benchmarks"][0]["status"] = "failed";
  expect_error(bad, "benchmarks[0].samples_ms: must be empty unless status is ok");
  bad = good;
  bad["benchmarks"][0]["devices"] = nlohmann::json::array();
  expect_error(bad, "benchmarks[0].devices: must not be empty");
  bad["benchmarks"][0]["devices"] = {0, 1, 0};
  expect_error(bad, "benchmarks[0].devices: must not name a device twice");
  bad["benchmarks"][0]["devices"] = {-1};
  expect_error(bad, "benchmarks[0].devices: must hold device numbers");
  bad["benchmarks"][0]["devices"] = {1.0};
  expect_error(bad, "benchmarks[0].devices: must hold device numbers");
  bad["benchmarks"][0]["devices"] = 0;
  expect_error(bad, "benchmarks[0].devices: must be an array");
  bad = good;
  bad["benchmarks"][0]["backend_report"] = {1, 2};
  expect_error(bad, "benchmarks[0].backend_report: must be an object or null");
  bad = good;
  bad["benchmarks"][0]["causal"] = "full";
  expect_error(bad, "benchmarks[0].causal: must be true or false");
  bad["benchmarks"][0]["causal"] = nullptr;
  expect_error(bad, "benchmarks[0].causal: must be true or false");
}

BOOST_AUTO_TEST_CASE(a_row_timed_in_the_base_and_missing_now_fails_the_gate) {
  bench_row skipped_now = failed_row("k", 1024);
  skipped_now.status = bench_status::skipped;
  skipped_now.message = "needs about 200 GiB of device memory";
  const auto base =
      results_with({timed_row("k", 1024, samples(1.0)), timed_row("k", 2048, samples(1.0)),
                    timed_row("k", 4096, samples(1.0))});
  const auto next = results_with({skipped_now, timed_row("k", 4096, samples(1.0))});
  const comparison c = compare_results(base, next, {});
  BOOST_REQUIRE_EQUAL(c.rows.size(), 3u);
  BOOST_TEST(c.rows[0].status == verdict::skipped);
  BOOST_TEST(c.rows[1].status == verdict::gone);
  BOOST_TEST(c.rows[2].status == verdict::same);

  const gate_verdict strict = judge_gate(c, {5, false});
  BOOST_TEST(!strict.passed());
  BOOST_TEST(strict.exit_code() == 1);
  BOOST_TEST(regression_exit_code(c, 5) == 1);
  BOOST_TEST(strict.compared == 1u);
  BOOST_REQUIRE_EQUAL(strict.skipped.size(), 1u);
  BOOST_REQUIRE_EQUAL(strict.gone.size(), 1u);
  BOOST_TEST(strict.skipped[0].name == "k/gla/bf16/fwd/B4_T1024_H16_K128_V128/gates-mild");
  BOOST_TEST(strict.gone[0].name == "k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild");
  const std::string line = comparison_printer::verdict_line(strict);
  BOOST_TEST_INFO(line);
  BOOST_TEST(line.rfind("verdict: FAIL — --fail-on-regression 5%: ", 0) == 0);
  BOOST_TEST(line.find("1 row timed in the base GONE (pass --allow-missing to allow) "
                       "(k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild)") != std::string::npos);
  BOOST_TEST(line.find("1 row timed in the base SKIPPED (pass --allow-missing to allow) "
                       "(k/gla/bf16/fwd/B4_T1024_H16_K128_V128/gates-mild)") != std::string::npos);

  // --allow-missing lets them through, and says so.
  const gate_verdict lenient = judge_gate(c, {5, true});
  BOOST_TEST(lenient.passed());
  BOOST_TEST(lenient.excused.size() == 2u);
  const std::string pass = comparison_printer::verdict_line(lenient);
  BOOST_TEST_INFO(pass);
  BOOST_TEST(pass.rfind("verdict: PASS — --fail-on-regression 5% --allow-missing: 1 row timed "
                        "in both runs, none SLOWER by more than 5%, BROKEN, GONE or SKIPPED; "
                        "allowed by --allow-missing: 2 rows timed in the base GONE or SKIPPED (",
                        0) == 0);

  // A row that was not timed in the base either is no loss.
  const auto skipped_base = results_with({skipped_now, timed_row("k", 4096, samples(1.0))});
  BOOST_TEST(judge_gate(compare_results(skipped_base, skipped_base, {}), {5, false}).passed());
}

BOOST_AUTO_TEST_CASE(broken_fails_the_gate_even_with_allow_missing) {
  const auto base =
      results_with({timed_row("k", 2048, samples(1.0)), timed_row("k", 4096, samples(1.0))});
  const auto next = results_with({failed_row("k", 2048), timed_row("k", 4096, samples(1.0))});
  const gate_verdict g = judge_gate(compare_results(base, next, {}), {1000, true});
  BOOST_TEST(!g.passed());
  BOOST_REQUIRE_EQUAL(g.broken.size(), 1u);
  BOOST_TEST(g.excused.empty());
  BOOST_TEST(comparison_printer::verdict_line(g).find(
                 "1 row BROKEN (timed in the base, failing now) "
                 "(k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(gate_fails_when_nothing_was_compared) {
  // Two empty runs, two runs that failed everything, a run against an empty one: no row
  // timed in both, so the gate cannot pass, --allow-missing or not.
  const auto empty = results_with({});
  const auto failing = results_with({failed_row("k", 2048)});
  const auto timed = results_with({timed_row("k", 2048, samples(1.0))});
  for (const auto& [base, next] : {std::pair{empty, empty}, std::pair{failing, failing},
                                   std::pair{empty, timed}, std::pair{timed, empty}})
    for (bool allow_missing : {false, true}) {
      const gate_verdict g = judge_gate(compare_results(base, next, {}), {5, allow_missing});
      BOOST_TEST(g.compared == 0u);
      BOOST_TEST(!g.passed());
      BOOST_TEST(comparison_printer::verdict_line(g).find(
                     "no row was timed in both runs: nothing was compared") != std::string::npos);
    }
  // A --backend filter that keeps nothing compares nothing too.
  compare_options other;
  other.backends = {"other"};
  BOOST_TEST(regression_exit_code(compare_results(timed, timed, other), 5) == 1);
}

BOOST_AUTO_TEST_CASE(verdict_line_ends_the_markdown_and_is_in_the_json) {
  const auto base =
      results_with({timed_row("k", 1024, samples(1.0)), timed_row("k", 2048, samples(1.0)),
                    timed_row("k", 4096, samples(1.0))});
  const auto next =
      results_with({timed_row("k", 1024, samples(1.3)), timed_row("k", 2048, samples(1.12)),
                    timed_row("k", 4096, samples(1.0))});
  const comparison c = compare_results(base, next, {});
  const gate_verdict g = judge_gate(c, {10, false});
  BOOST_REQUIRE_EQUAL(g.slower.size(), 2u);
  std::ostringstream md;
  comparison_printer::print_markdown(md, c, g);
  const std::string text = md.str();
  // The tally (SLOWER counts every significant slowdown, not only those over the
  // threshold), then the verdict line last.
  const std::string want =
      "\n1 SAME, 2 SLOWER\n"
      "\nverdict: FAIL — --fail-on-regression 10%: 2 rows SLOWER by more than 10% "
      "(k/gla/bf16/fwd/B4_T1024_H16_K128_V128/gates-mild: +30.0%, "
      "k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild: +12.0%)\n";
  BOOST_TEST_INFO(text);
  BOOST_REQUIRE(text.size() > want.size());
  BOOST_TEST(text.substr(text.size() - want.size()) == want);
  // Without the gate there is no verdict line.
  std::ostringstream plain;
  comparison_printer::print_markdown(plain, c);
  BOOST_TEST(plain.str().find("verdict:") == std::string::npos);

  const nlohmann::json j = comparison_printer::to_json(c, g);
  BOOST_TEST(j.at("exit_code").get<int>() == 1);
  BOOST_TEST(j.at("fail_on_regression_pct").get<double>() == 10.0);
  const nlohmann::json& gate = j.at("gate");
  BOOST_TEST(gate.at("passed").get<bool>() == false);
  BOOST_TEST(gate.at("rows_compared").get<int>() == 3);
  BOOST_TEST(gate.at("slower").size() == 2u);
  BOOST_TEST(gate.at("slower")[0].get<std::string>() ==
             "k/gla/bf16/fwd/B4_T1024_H16_K128_V128/gates-mild");
  BOOST_TEST(gate.at("verdict").get<std::string>() == comparison_printer::verdict_line(g));
  BOOST_TEST(!comparison_printer::to_json(c, std::nullopt).contains("gate"));

  // A passing gate says what it compared; long lists are cut after ten names.
  const gate_verdict lenient = judge_gate(c, {50, false});
  BOOST_TEST(comparison_printer::verdict_line(lenient) ==
             "verdict: PASS — --fail-on-regression 50%: 3 rows timed in both runs, none SLOWER "
             "by more than 50%, BROKEN, GONE or SKIPPED");
  std::vector<bench_row> many_base, many_next;
  for (int64_t t = 1; t <= 12; ++t) {
    many_base.push_back(timed_row("k", t, samples(1.0)));
    many_next.push_back(timed_row("k", t, samples(2.0)));
  }
  const std::string cut = comparison_printer::verdict_line(
      judge_gate(compare_results(results_with(many_base), results_with(many_next), {}), {5}));
  BOOST_TEST_INFO(cut);
  BOOST_TEST(cut.find("12 rows SLOWER by more than 5% (") != std::string::npos);
  BOOST_TEST(cut.find("B4_T10_H16_K128_V128/gates-mild: +100.0%, and 2 more)") !=
             std::string::npos);
  BOOST_TEST(cut.find("B4_T11_") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(rows_are_matched_whatever_their_order) {
  // The matching goes through a sorted index, not a scan: check it on a shuffled run.
  std::vector<bench_row> base_rows, next_rows;
  for (int64_t t = 1; t <= 500; ++t) base_rows.push_back(timed_row("k", t, samples(1.0)));
  for (int64_t t = 500; t >= 1; --t)
    if (t != 250) next_rows.push_back(timed_row("k", t, samples(t == 100 ? 2.0 : 1.0)));
  next_rows.push_back(timed_row("k", 501, samples(1.0)));
  const comparison c = compare_results(results_with(base_rows), results_with(next_rows), {});
  BOOST_REQUIRE_EQUAL(c.rows.size(), 501u);
  for (size_t i = 0; i < 500; ++i) {
    BOOST_TEST(c.rows[i].config.T == int64_t(i + 1));  // base order, then the new rows
    const verdict want = i + 1 == 250   ? verdict::gone
                         : i + 1 == 100 ? verdict::slower
                                        : verdict::same;
    BOOST_TEST(c.rows[i].status == want);
  }
  BOOST_TEST(c.rows[500].status == verdict::added);
  BOOST_TEST(c.rows[500].config.T == 501);
}

BOOST_AUTO_TEST_CASE(results_integers_are_read_exactly) {
  const nlohmann::json good = to_json(results_with({timed_row("k", 2048, samples(1.0))}));
  auto with_T = [&](const std::string& text) {
    auto j = good;
    j["benchmarks"][0]["T"] = nlohmann::json::parse(text);  // as the file's parser reads it
    return j;
  };
  const std::string rule =
      "f.json: benchmarks[0].T: must be a positive integer up to 2^63 − 1, written without a "
      "fraction or exponent";
  for (const std::string bad :
       {"4.5", "2048.0", "1e30", "2e3", "-2048", "0", "9223372036854775808", "18446744073709551615",
        "18446744073709551616", "1e400", "\"2048\"", "true", "null"}) {
    try {
      bench_results_from_json(with_T(bad), "f.json");
      BOOST_ERROR("T = " + bad + " accepted");
    } catch (const results_error& e) {
      BOOST_TEST_INFO("T = " << bad);
      BOOST_TEST(std::string(e.what()) == rule);
    } catch (const std::exception& e) {  // 1e400 does not even parse: the reader's job
      BOOST_TEST(bad == "1e400");
    }
  }
  BOOST_TEST(bench_results_from_json(with_T("2048"), "f.json").rows[0].config.T == 2048);
  // Exact beyond 2^53, where a double would round: 2^53 + 1 (with B·H·K·V = 2^17 this is
  // over 2^62, so the others are set to 1).
  auto big = with_T("9007199254740993");
  for (const char* key : {"B", "H", "K", "V"}) big["benchmarks"][0][key] = 1;
  BOOST_TEST(bench_results_from_json(big, "f.json").rows[0].config.T == 9007199254740993LL);
  // Each part fits, but their product would overflow what is computed from it.
  auto huge = good;
  huge["benchmarks"][0]["T"] = nlohmann::json::parse("9007199254740993");
  try {
    bench_results_from_json(huge, "f.json");
    BOOST_ERROR("B·T·H·K·V over 2^62 accepted");
  } catch (const results_error& e) {
    BOOST_TEST(std::string(e.what()) ==
               "f.json: benchmarks[0]: B·T·H·K·V must be at most 2^62 (sizes would overflow)");
  }
  auto version = good;
  version["context"]["schema_version"] = nlohmann::json::parse("4294967297");  // 2^32 + 1
  BOOST_CHECK_THROW(bench_results_from_json(version, "f.json"), results_error);
  version["context"]["schema_version"] = nlohmann::json::parse("1.0");
  BOOST_CHECK_THROW(bench_results_from_json(version, "f.json"), results_error);
}

BOOST_AUTO_TEST_CASE(json_type_errors_name_the_file_and_the_field) {
  auto expect = [](const nlohmann::json& j, const std::string& message) {
    try {
      const bench_results r = bench_results_from_json(j, "f.json");
      // What compare and report read back must not throw a JSON type error either.
      (void)results_device(r);
      BOOST_ERROR("accepted, wanted: " + message);
    } catch (const results_error& e) {
      BOOST_TEST(std::string(e.what()) == message);
    } catch (const std::exception& e) {
      BOOST_ERROR(std::string("not a results_error: ") + e.what() + "; wanted: " + message);
    }
  };
  const nlohmann::json good = to_json(results_with({timed_row("k", 2048, samples(1.0))}));
  auto j = good;
  j["context"]["glabench_results"] = 5;
  expect(j,
         "f.json: context.glabench_results: must be \"bench\" (this is not a glabench bench "
         "results file)");
  j = good;
  j["context"]["device"] = 7;
  expect(j, "f.json: context.device: must be a string");
  j = good;
  j["context"]["git_commit"] = nlohmann::json::array();
  expect(j, "f.json: context.git_commit: must be a string");
  j = good;
  j["context"]["gpu_state_start"] = {{"sm_clock_mhz", 1980}, {"temperature_c", "hot"}};
  expect(j, "f.json: context.gpu_state_start.temperature_c: must be a finite number");
  j = good;
  j["context"]["gpu_state_end"] = {{"clock_event_reasons", 4}};
  expect(j, "f.json: context.gpu_state_end.clock_event_reasons: must be a string");
  j = good;
  j["context"]["peaks"]["cuda"]["gemm_tflops"]["bf16"] = "fast";
  expect(j, "f.json: context.peaks.cuda.gemm_tflops.bf16: must be a finite number");
  j = good;
  j["context"]["peaks"]["cuda"] = 3;
  expect(j, "f.json: context.peaks.cuda: must be an object");
  j = good;
  j["benchmarks"][0] = "row";
  expect(j, "f.json: benchmarks[0]: must be an object");
  j = good;
  j["benchmarks"][0]["checks"][0] = 1;
  expect(j, "f.json: benchmarks[0].checks[0]: must be an object");
  j = good;
  j["benchmarks"][0]["samples_ms"] = "fast";
  expect(j, "f.json: benchmarks[0].samples_ms: must be an array");
  j = good;
  j["benchmarks"][0]["hot"] = 0;
  expect(j, "f.json: benchmarks[0].hot: must be true or false");
  j = good;
  j["benchmarks"] = {{"a", 1}};
  expect(j, "f.json: benchmarks: must be an array");
  j = good;
  j["benchmarks"].push_back(j["benchmarks"][0]);
  expect(j,
         "f.json: benchmarks[1]: repeats the configuration "
         "k/gla/bf16/fwd/B4_T2048_H16_K128_V128/gates-mild of benchmarks[0]");
}

BOOST_AUTO_TEST_CASE(a_file_whose_number_overflows_is_a_results_error) {
  const std::string path = std::string(SCRATCH_DIR) + "/overflow.json";
  std::filesystem::create_directories(SCRATCH_DIR);
  auto j = to_json(results_with({timed_row("k", 2048, samples(1.0))}));
  std::string text = j.dump();
  const std::string from = "\"bytes\":100000000.0";
  BOOST_REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "\"bytes\":1e400");
  std::ofstream(path) << text;
  try {
    read_bench_results(path);
    BOOST_ERROR("1e400 accepted");
  } catch (const results_error& e) {
    BOOST_TEST_INFO(e.what());
    BOOST_TEST(std::string(e.what()).rfind(path + ": not valid JSON (", 0) == 0);
  }
}

BOOST_AUTO_TEST_CASE(a_file_is_read_as_its_parsed_json_is) {
  // read_bench_results streams the rows (a SAX pass, no JSON object per row); the checks
  // are the same as on a parsed document, bench_results_from_json: same results, same
  // first error, on good files and on every kind of bad one.
  const std::string dir = std::string(SCRATCH_DIR) + "/read_paths";
  std::filesystem::create_directories(dir);
  auto outcome_of_file = [&](const std::string& text) {
    const std::string path = dir + "/f.json";
    std::ofstream(path, std::ios::trunc) << text;
    try {
      return to_json(read_bench_results(path)).dump();
    } catch (const results_error& e) {
      return std::string(e.what()).replace(0, path.size(), "FILE");
    }
  };
  auto outcome_of_json = [&](const std::string& text) {
    try {
      return to_json(bench_results_from_json(nlohmann::json::parse(text), "FILE")).dump();
    } catch (const results_error& e) {
      return std::string(e.what());
    }
  };
  bench_row odd = failed_row("j", 1024);
  odd.checks = {{"o", NAN, 1e-2, false}, {"ht", 0.5, 1e-2, false}};
  const nlohmann::json good = to_json(results_with(
      {timed_row("k", 2048, samples(1.0)), odd, timed_row("k", 4096, samples(2.0, 3))}));
  std::vector<std::string> texts = {good.dump(), good.dump(2)};
  auto variant = [&](auto&& change) {
    nlohmann::json j = good;
    change(j);
    texts.push_back(j.dump());
  };
  using nlohmann::json;
  variant([](json& j) {
    j["benchmarks"][1]["unknown"] = {{"a", {1, {{"b", 2}}}}, {"c", json::array()}};
  });
  variant([](json& j) { j["benchmarks"][0]["samples_ms"].push_back("x"); });
  variant([](json& j) { j["benchmarks"][0]["samples_ms"].push_back(json::array({1.0})); });
  variant([](json& j) { j["benchmarks"][0]["samples_ms"] = {{"a", 1.0}}; });
  variant([](json& j) { j["benchmarks"][0]["samples_ms"] = 1.0; });
  variant([](json& j) { j["benchmarks"][0].erase("samples_ms"); });
  variant([](json& j) { j["benchmarks"][0]["checks"] = json::object(); });
  variant([](json& j) { j["benchmarks"][0]["checks"].push_back(3); });
  variant([](json& j) { j["benchmarks"][0]["checks"].push_back(json::array()); });
  variant([](json& j) { j["benchmarks"][0]["checks"][0]["tensor"] = json::array({"o"}); });
  variant([](json& j) { j["benchmarks"][0]["checks"][0].erase("threshold"); });
  variant([](json& j) { j["benchmarks"][0]["checks"][0]["max_abs"] = nullptr; });
  variant([](json& j) { j["benchmarks"][0]["B"] = json::object(); });
  variant([](json& j) { j["benchmarks"][0]["B"] = 2.0; });
  variant([](json& j) { j["benchmarks"][0]["B"] = -2; });
  variant([](json& j) { j["benchmarks"][0]["hot"] = nullptr; });
  variant([](json& j) { j["benchmarks"][0].erase("causal"); });
  variant([](json& j) { j["benchmarks"][0]["causal"] = false; });
  variant([](json& j) { j["benchmarks"][0]["causal"] = 1; });
  variant([](json& j) {  // row 0 without the field is row 2's configuration: a repeat
    j["benchmarks"][2] = j["benchmarks"][0];
    j["benchmarks"][0].erase("causal");
  });
  variant([](json& j) {  // a full row beside its causal twin: another configuration
    j["benchmarks"][2] = j["benchmarks"][0];
    j["benchmarks"][2]["causal"] = false;
  });
  variant([](json& j) { j["benchmarks"][0]["gbps"] = "fast"; });
  variant([](json& j) { j["benchmarks"][0]["wall_s"] = nullptr; });
  variant([](json& j) { j["benchmarks"][0]["devices"] = {3, 1}; });
  variant([](json& j) { j["benchmarks"][0]["devices"] = {1, json::array({2})}; });
  variant([](json& j) { j["benchmarks"][0]["devices"] = {{"a", 1}}; });
  variant([](json& j) { j["benchmarks"][0]["devices"] = json::array(); });
  variant([](json& j) { j["benchmarks"][0]["devices"] = {4294967296ULL}; });
  variant([](json& j) { j["benchmarks"][0]["devices"] = nullptr; });
  variant([](json& j) {
    j["benchmarks"][0]["backend_report"] = {{"rank_ms", {1, 2.5}}, {"x", {{"y", {nullptr, true}}}}};
  });
  variant([](json& j) { j["benchmarks"][0]["backend_report"] = nullptr; });
  variant([](json& j) { j["benchmarks"][0]["backend_report"] = "text"; });
  variant([](json& j) { j["benchmarks"][0]["backend_report"] = json::array({1}); });
  variant([](json& j) { j["benchmarks"][0]["backend_report"] = json::object(); });
  variant([](json& j) { j["benchmarks"][2] = 5; });
  variant([](json& j) { j["benchmarks"][2] = json::array({1, {{"a", 2}}}); });
  variant([](json& j) { j["benchmarks"][2] = j["benchmarks"][0]; });
  variant([](json& j) { j["benchmarks"] = {{"0", j["benchmarks"][0]}}; });
  variant([](json& j) { j["benchmarks"] = json::array(); });
  variant([](json& j) { j.erase("benchmarks"); });
  variant([](json& j) { j["context"]["glabench_results"] = "verify"; });  // and a bad row:
  variant([](json& j) {
    j["context"]["glabench_results"] = "verify";
    j["benchmarks"][0]["B"] = 0;
  });
  variant([](json& j) { j["context"]["device"] = json::array({"x"}); });
  variant([](json& j) { j["context"]["peaks"]["cuda"]["gemm_tflops"] = {{"bf16", nullptr}}; });
  variant([](json& j) { j["context"]["extra"] = {{"nested", {1, 2, {{"deep", json::array()}}}}}; });
  texts.push_back("[1, 2, {\"benchmarks\": []}]");
  texts.push_back("\"bench\"");
  texts.push_back("{\"benchmarks\": [5], \"context\": 3}");
  // A repeated key: the last one counts, as in a parsed object.
  std::string twice = good.dump();
  twice.insert(1, "\"benchmarks\": [7], ");
  texts.push_back(twice);
  // Within a row too: a row's devices and report given twice.
  for (const char* first : {R"("devices":[9,9],)", R"("backend_report":{"a":[1]},"devices":{},)"}) {
    std::string row_twice = good.dump();
    const size_t at = row_twice.find(R"("benchmarks":[{)");
    BOOST_REQUIRE(at != std::string::npos);
    row_twice.insert(at + 15, first);
    texts.push_back(row_twice);
  }
  for (const auto& text : texts) {
    BOOST_TEST_INFO(text.substr(0, 300));
    const std::string from_file = outcome_of_file(text);
    BOOST_TEST(from_file == outcome_of_json(text));
  }
  BOOST_TEST(outcome_of_file(good.dump()) == good.dump());  // the round trip, through a file
}

// Results files are read by nlohmann's parser, which nests without bound; a text nested
// deeper than kMaxJsonDepth is refused first, naming where, so that no recursive step
// (printing, plotting) meets it.
BOOST_AUTO_TEST_CASE(json_nesting_is_bounded) {
  auto nested = [](std::size_t depth) {
    return "{\"a\": [1, {\"b\": " + std::string(depth, '[') + std::string(depth, ']') + "}]}";
  };
  BOOST_TEST(glabench::json_depth_within(nested(kMaxJsonDepth - 3), kMaxJsonDepth));
  BOOST_TEST(!glabench::json_depth_within(nested(kMaxJsonDepth), kMaxJsonDepth));
  BOOST_TEST(glabench::json_depth_within("[\"[[[[\", {\"k\": \"]]\\\"[\"}]", 2));
  BOOST_TEST(glabench::json_nesting_error(nested(kMaxJsonDepth - 3), kMaxJsonDepth).empty());
  const std::string what = glabench::json_nesting_error(nested(kMaxJsonDepth), kMaxJsonDepth);
  BOOST_TEST(what.find("a[1].b[0][0]") != std::string::npos, what);
  BOOST_TEST(what.find("nest deeper than 64 levels") != std::string::npos, what);
  try {
    bench_results_from_text(nested(kMaxJsonDepth), "deep.json");
    BOOST_ERROR("a text nested deeper than kMaxJsonDepth was read");
  } catch (const results_error& e) {
    BOOST_TEST(std::string(e.what()).rfind("deep.json: not valid JSON (byte ", 0) == 0, e.what());
    BOOST_TEST(std::string(e.what()).find("a[1].b[0][0]") != std::string::npos, e.what());
  }
}

// One description of a row's fields (results_row.hpp) serves the writer and both readers:
// a row with every field set comes back whole through each reader, and the writer writes
// what the readers read (and Google Benchmark's fields beside them).
BOOST_AUTO_TEST_CASE(every_row_field_round_trips_through_both_readers) {
  bench_row r = timed_row("k", 2048, samples(1.0));
  r.config.hot = true;
  r.config.num_devices = 2;
  r.devices = {3, 1};
  r.config.timing = "graph";
  r.config.gates = "fla";
  r.message = "a note";
  r.noise_target_met = true;
  r.wall_s = 12.5;
  r.gbps = 800;
  r.tflops = 9.5;
  r.bandwidth_fraction = 0.25;
  r.flop_fraction = 0.125;
  r.backend_report = {{"rank_ms", {0.5, 0.6}}};
  r.timed_outputs_identical = false;
  r.timed_outputs_rel_l2 = NAN;  // written as null, read back as NaN
  tensor_check nan_check = r.checks.front();
  nan_check.tensor = "ht";
  nan_check.rel_l2 = NAN;
  nan_check.max_abs = NAN;
  nan_check.finite = false;
  nan_check.passed = false;
  r.checks.push_back(nan_check);
  const bench_results written = results_with({r, failed_row("j", 2048)});
  const nlohmann::json j = to_json(written);
  for (const char* key : {"name", "run_name", "run_type", "repetitions", "real_time", "cpu_time",
                          "time_unit", "median_ms", "p20_ms", "cv"})
    BOOST_TEST(j["benchmarks"][0].contains(key), key);
  BOOST_TEST(j["benchmarks"][1]["error_occurred"] == true);
  BOOST_TEST(j["benchmarks"][0]["timed_outputs_rel_l2"].is_null());
  for (const bench_results& back :
       {bench_results_from_json(j, "mem"), bench_results_from_text(j.dump(), "mem")}) {
    BOOST_REQUIRE_EQUAL(back.rows.size(), 2u);
    const bench_row& b = back.rows[0];
    BOOST_TEST(b.config == r.config);
    BOOST_TEST((b.devices == std::vector<int32_t>{3, 1}));
    BOOST_TEST(b.message == r.message);
    BOOST_TEST(b.samples_ms == r.samples_ms);
    BOOST_TEST(b.stats->median == r.stats->median);
    BOOST_TEST(b.noise_target_met);
    BOOST_TEST(*b.wall_s == 12.5);
    BOOST_TEST(*b.gbps == 800);
    BOOST_TEST(*b.tflops == 9.5);
    BOOST_TEST(*b.bandwidth_fraction == 0.25);
    BOOST_TEST(*b.flop_fraction == 0.125);
    BOOST_TEST(b.backend_report == r.backend_report);
    BOOST_TEST(*b.timed_outputs_identical == false);
    BOOST_TEST(std::isnan(*b.timed_outputs_rel_l2));
    BOOST_REQUIRE_EQUAL(b.checks.size(), 2u);
    BOOST_TEST(b.checks[0].tensor == r.checks[0].tensor);
    BOOST_TEST(b.checks[0].rel_l2 == r.checks[0].rel_l2);
    BOOST_TEST(b.checks[0].max_abs == r.checks[0].max_abs);
    BOOST_TEST(b.checks[0].threshold == r.checks[0].threshold);
    BOOST_TEST(b.checks[0].passed == r.checks[0].passed);
    BOOST_TEST((std::isnan(b.checks[1].rel_l2) && !b.checks[1].finite));
    BOOST_TEST(std::isnan(b.checks[1].max_abs));
    BOOST_TEST((back.rows[1].status == bench_status::failed));
    BOOST_TEST(to_json(back) == j);
  }
}

// compare --json writes its rows one by one (comparison_printer::json_text): the text is
// what write_json_file writes for to_json, byte for byte, hostile strings included.
BOOST_AUTO_TEST_CASE(the_json_text_is_what_write_json_file_writes) {
  const std::string dir = std::string(SCRATCH_DIR) + "/json_text";
  std::filesystem::create_directories(dir);
  bench_row odd = timed_row("we\x1b[2Jird|\"name\\\xff", 64, samples(1.0));
  odd.config.hot = true;
  bench_row failing = failed_row("b", 32);
  failing.message = "line\nbreak\t\x01 \xe2\x80\xa8 ok \xc3\xa9";
  bench_results base = results_with(
      {timed_row("k", 1024, samples(1.0)), odd, failing, timed_row("k", 4096, samples(2.0, 3))});
  base.context["backend_environment"] = {{"KNOB\x1b", "1|2"}, {"N", 3}};
  base.context["nested"] = {{"list", {1, 2.5, nlohmann::json::object(), "x\ny"}}};
  const bench_results next =
      results_with({timed_row("k", 1024, samples(1.5)), timed_row("b", 32, samples(1.0)),
                    timed_row("new", 8, samples(1.0))});
  const comparison c = compare_results(base, next, {});
  const bench_results empty = results_with({});
  const comparison none = compare_results(empty, empty, {});
  int checked = 0;
  for (const comparison* cmp : {&c, &none}) {
    for (const auto& gate : {std::optional<gate_verdict>(), std::optional(judge_gate(*cmp, {5}))}) {
      const std::string path = dir + "/written.json";
      write_json_file(path, comparison_printer::to_json(*cmp, gate));
      std::ifstream in(path, std::ios::binary);
      const std::string written((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
      BOOST_TEST(comparison_printer::json_text(*cmp, gate) == written);
      ++checked;
    }
  }
  BOOST_TEST(checked == 4);
}

// Moving the runs into compare_results gives the comparison copying them gives.
BOOST_AUTO_TEST_CASE(compare_results_moves_or_copies_the_rows_alike) {
  auto runs = [] {
    return std::pair(results_with({timed_row("k", 1, samples(1.0)), failed_row("k", 2),
                                   timed_row("k", 3, samples(1.0))}),
                     results_with({timed_row("k", 1, samples(1.5)), timed_row("k", 2, samples(1.0)),
                                   timed_row("k", 4, samples(1.0))}));
  };
  auto [base, next] = runs();
  const comparison copied = compare_results(base, next, {});
  BOOST_TEST(base.rows.size() == 3u);  // left as they were
  auto [base2, next2] = runs();
  const comparison moved = compare_results(std::move(base2), std::move(next2), {});
  BOOST_TEST(comparison_printer::json_text(copied, judge_gate(copied, {5})) ==
             comparison_printer::json_text(moved, judge_gate(moved, {5})));
  // Every row points into its comparison's own copies of the runs' rows.
  for (const comparison* c : {&copied, &moved})
    for (const compare_row& row : c->rows) {
      if (row.base)
        BOOST_TEST((row.base >= c->base_rows.data() &&
                    row.base < c->base_rows.data() + c->base_rows.size()));
      if (row.next)
        BOOST_TEST(
            (row.next >= c->new_rows.data() && row.next < c->new_rows.data() + c->new_rows.size()));
    }
}

BOOST_AUTO_TEST_CASE(report_markdown_has_tables_and_speedups) {
  const std::vector<named_results> runs = {
      {"run.json",
       results_with({timed_row("naive_recurrent", 2048, samples(10.0)),
                     timed_row("fast", 2048, samples(0.5)), failed_row("broken", 2048)})}};
  BOOST_TEST(report_printer::default_baseline(runs) == "naive_recurrent");
  std::ostringstream md;
  report_printer::print_markdown(
      md, runs, "naive_recurrent",
      {{"time_vs_t", "time_vs_t.png"}, {"time_by_shape", "time_by_shape.png"}},
      {{"speedup", "nothing to compare"}});
  const std::string s = md.str();
  BOOST_TEST(s.find("## run.json") != std::string::npos);
  BOOST_TEST(
      s.find("| fast | gla | bf16 | fwd | B4 T2048 H16 K128 V128 gates:mild | ok | 0.4999") !=
      std::string::npos);
  BOOST_TEST(
      s.find("| fast | gla bf16 fwd B4 T2048 H16 K128 V128 gates:mild | 9.998 | 0.4999 | 20×") !=
      std::string::npos);
  BOOST_TEST(s.find("**failed**") != std::string::npos);
  BOOST_TEST(s.find("quick verify failed") != std::string::npos);
  BOOST_TEST(s.find("![Time against T](time_vs_t.png)") != std::string::npos);
  BOOST_TEST(s.find("![Time per shape](time_by_shape.png)") != std::string::npos);
  BOOST_TEST(s.find("![Time against T]") < s.find("![Time per shape]"));
  BOOST_TEST(s.find("Not drawn: nothing to compare.") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(report_speedups_pair_files_of_one_device_only) {
  // A peer timed in its own file on the same device pairs with the baseline; one from
  // another device, or from a file that names no device, does not.
  auto on = [](bench_results r, const char* device) {
    if (device) r.context["device"] = device;
    return r;
  };
  const std::vector<named_results> runs = {
      {"ours.json", on(results_with({timed_row("naive_recurrent", 2048, samples(10.0))}), "H200")},
      {"peer.json", on(results_with({timed_row("fla.chunk_gla", 2048, samples(0.5))}), "H200")},
      {"other.json", on(results_with({timed_row("elsewhere", 2048, samples(1.0))}), "A100")},
      {"bare.json", on(results_with({timed_row("nameless", 2048, samples(2.0))}), nullptr)}};
  std::ostringstream md;
  report_printer::print_markdown(md, runs, "naive_recurrent", {}, {});
  const std::string s = md.str();
  BOOST_TEST(s.find("| fla.chunk_gla | gla bf16 fwd B4 T2048 H16 K128 V128 gates:mild | 9.998 | "
                    "0.4999 | 20×") != std::string::npos);
  BOOST_TEST(s.find("| elsewhere | gla bf16") == std::string::npos);
  BOOST_TEST(s.find("| nameless | gla bf16") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(essential_cost_of_a_small_gla) {
  // B1 T2 H1 K2 V3 fp32 forward: reads q k g (2·2 each) v (2·3) h0 (6), writes o (6) ht (6).
  const problem p{op_kind::gla, 1, 2, 1, 2, 3, 1.0, true};
  const op_cost c = essential_cost(p, 4, 4, true, false);
  BOOST_TEST(c.bytes == 4.0 * (4 + 4 + 4 + 6 + 6 + 6 + 6));
  BOOST_TEST(c.flops == 5.0 * 2 * 2 * 3);
  BOOST_TEST(essential_cost(p, 4, 4, true, true).flops == 14.0 * 2 * 2 * 3);
  // bf16 tokens with fp32 states (ABI 1.5): h0 and ht count 4 bytes an element.
  BOOST_TEST(essential_cost(p, 2, 4, true, false).bytes ==
             2.0 * (4 + 4 + 4 + 6 + 6) + 4.0 * (6 + 6));
  // With the backward: dht, h0 again and dh0 are states too.
  const double tokens_fwd = 4 + 4 + 4 + 6 + 6, tokens_bwd = 2 * 4 + 2 * 6 + 4 + 2 * 4 + 6 + 4;
  BOOST_TEST(essential_cost(p, 2, 4, true, true).bytes ==
             2.0 * (tokens_fwd + tokens_bwd) + 4.0 * (6 + 6 + 3 * 6));
}

BOOST_AUTO_TEST_CASE(essential_cost_of_a_packed_batch_counts_its_states) {
  // B1 T5 packed as 2 + 3 tokens: two states per head, not one.
  problem p{op_kind::gla, 1, 5, 1, 2, 2, 1.0, true};
  const double one_state = essential_cost(p, 8, 8, true, false).bytes;
  p.cu_seqlens = {0, 2, 5};
  BOOST_TEST(essential_cost(p, 8, 8, true, false).bytes == one_state + 8.0 * 2 * 4);
}

BOOST_AUTO_TEST_SUITE_END()
