// `glabench compare`: match two bench results by configuration and decide, per row,
// whether NEW is FASTER, SLOWER or the SAME as BASE.
//
// A row's verdict (README "Comparing runs" has the reasoning):
//   1. |new/base − 1| within the larger of the two runs' noise (relative p20–p80 spread)
//      or within the drift floor (min_change for CUDA rows, min_change_host for CPU
//      rows) → SAME: no change that size can be told from noise or from the drift
//      between runs of an unchanged build.
//   2. otherwise, with ≥ 5 samples on each side: FASTER/SLOWER only if the Mann-Whitney
//      U test rejects equal distributions at alpha; SAME if it does not.
//   3. with fewer samples: FASTER/SLOWER only if the two runs' p20–p80 ranges do not
//      overlap.
// Rows that cannot be timed on one side get BROKEN (passed, now fails: a correctness
// loss), FIXED, SKIPPED, NEW or GONE.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_results.hpp"

namespace glabench {

enum class verdict { faster, slower, same, broken, fixed, failed, skipped, added, gone };
std::string_view verdict_name(verdict v);

struct compare_options {
  // Relative change below which a row is SAME. Measured on an H200 (README, "Comparing
  // runs"): back-to-back runs of one build differ by ≤ 0.4% on the GPU, but by up to
  // 7.6% outside their own noise for CPU backends timed on the host.
  double min_change = 0.02;
  double min_change_host = 0.10;
  double alpha = 0.05;  // significance level of the U test
  int min_samples_for_test = 5;
  std::vector<std::string> backends;  // compare only these (empty: all)
};

struct compare_row {
  bench_config config;
  // The configuration's row in each run, null where the run has none: they point into
  // the comparison's base_rows and new_rows.
  const bench_row* base = nullptr;
  const bench_row* next = nullptr;
  verdict status = verdict::same;
  std::optional<double> ratio;    // new / base median time (> 1 is slower)
  std::optional<double> p_value;  // when the U test ran
  std::string note;
};

struct speedup_summary {
  std::string backend;         // "" for overall
  size_t rows = 0;             // rows timed on both sides
  double geomean_speedup = 1;  // geometric mean of base/new
};

struct comparison {
  std::string base_source, new_source;
  nlohmann::json base_context, new_context;
  std::vector<compare_row> rows;
  std::vector<speedup_summary> summaries;  // per backend, then overall
  // The two runs' rows, which compare_row's base and next point into. A comparison can
  // be moved (the rows stay where they are) but not copied.
  std::vector<bench_row> base_rows, new_rows;

  comparison() = default;
  comparison(comparison&&) = default;
  comparison& operator=(comparison&&) = default;
  comparison(const comparison&) = delete;
  comparison& operator=(const comparison&) = delete;
};

// Copies the two runs' rows into the comparison.
comparison compare_results(const bench_results& base, const bench_results& next,
                           const compare_options& opts);
// The same, moving the rows in (200,000 rows a side take a second to copy).
comparison compare_results(bench_results&& base, bench_results&& next, const compare_options& opts);

// The regression gate, `--fail-on-regression PCT`. It fails when
//   - a row is SLOWER by more than fail_pct percent (a FASTER row never fails it);
//   - a row is BROKEN: timed in the base, failing its verify in the new run;
//   - a row timed in the base is GONE from the new run or SKIPPED there, unless
//     allow_missing (--allow-missing): a gate must not pass by not timing a row;
//   - no row was timed in both runs: a gate that compared nothing passes nothing.
struct gate_rule {
  double fail_pct = 5;
  bool allow_missing = false;
};

struct gate_row {
  std::string name;             // the configuration
  std::optional<double> ratio;  // new / base, for SLOWER rows
};

struct gate_verdict {
  gate_rule rule;
  size_t compared = 0;  // rows timed in both runs
  // The rows that trip it: SLOWER by more than fail_pct, BROKEN, and rows timed in the
  // base but GONE or SKIPPED in the new run (when allow_missing, those are `excused`).
  std::vector<gate_row> slower, broken, gone, skipped, excused;
  bool passed() const {
    return compared > 0 && slower.empty() && broken.empty() && gone.empty() && skipped.empty();
  }
  int exit_code() const { return passed() ? 0 : 1; }
};

gate_verdict judge_gate(const comparison& c, const gate_rule& rule);

// The gate's exit status (0 pass, 1 fail) without --allow-missing.
int regression_exit_code(const comparison& c, double fail_pct);

// A run's noise: its p20–p80 spread relative to its median.
double relative_noise(const sample_summary& s);

// The device a results file was measured on ("" when its context has none).
std::string results_device(const bench_results& r);

}  // namespace glabench
