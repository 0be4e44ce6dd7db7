#include "compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace glabench {

std::string_view verdict_name(verdict v) {
  switch (v) {
    case verdict::faster:
      return "FASTER";
    case verdict::slower:
      return "SLOWER";
    case verdict::same:
      return "SAME";
    case verdict::broken:
      return "BROKEN";
    case verdict::fixed:
      return "FIXED";
    case verdict::failed:
      return "FAILED";
    case verdict::skipped:
      return "SKIPPED";
    case verdict::added:
      return "NEW";
    case verdict::gone:
      return "GONE";
  }
  return "?";
}

double relative_noise(const sample_summary& s) {
  return (s.p80 - s.p20) / s.median;
}

std::string results_device(const bench_results& r) {
  return r.context.value("device", std::string());
}

namespace {

void decide_timed(compare_row& row, const compare_options& opts) {
  const sample_summary& b = *row.base->stats;
  const sample_summary& n = *row.next->stats;
  const double ratio = n.median / b.median;
  row.ratio = ratio;
  const double floor = row.base->ran_on == "cuda" ? opts.min_change : opts.min_change_host;
  const double threshold = std::max({relative_noise(b), relative_noise(n), floor});
  const verdict direction = ratio > 1 ? verdict::slower : verdict::faster;
  if (std::abs(ratio - 1) <= threshold) {
    row.status = verdict::same;
    row.note = fmt::format("change within {:.1f}%", 100 * threshold);
    return;
  }
  const auto min_n = static_cast<size_t>(opts.min_samples_for_test);
  if (b.n >= min_n && n.n >= min_n) {
    const mann_whitney_result u = mann_whitney_u(row.base->samples_ms, row.next->samples_ms);
    row.p_value = u.p_value;
    row.status = u.p_value < opts.alpha ? direction : verdict::same;
    if (row.status == verdict::same)
      row.note = fmt::format("U test p = {:.3g} ≥ {}", u.p_value, opts.alpha);
    return;
  }
  const bool overlap = n.p20 <= b.p80 && b.p20 <= n.p80;
  row.status = overlap ? verdict::same : direction;
  row.note = fmt::format("{} samples: decided by p20–p80 overlap", std::min(b.n, n.n));
}

void decide(compare_row& row, const compare_options& opts) {
  if (!row.base) {
    row.status = verdict::added;
    return;
  }
  if (!row.next) {
    row.status = verdict::gone;
    return;
  }
  const bench_status b = row.base->status, n = row.next->status;
  if (b == bench_status::ok && n == bench_status::ok) return decide_timed(row, opts);
  if (b == bench_status::ok && is_failure(n)) {
    row.status = verdict::broken;
    row.note = row.next->message;
  } else if (is_failure(b) && n == bench_status::ok) {
    row.status = verdict::fixed;
  } else if (is_failure(n)) {
    row.status = verdict::failed;
    row.note = row.next->message;
  } else {
    row.status = verdict::skipped;
    row.note = n == bench_status::skipped ? row.next->message : row.base->message;
  }
}

// The comparison of two runs' rows, which it keeps: matched by configuration through a
// hash table of each side's configurations (config_index: O(n) on average), each
// compare_row pointing at its rows.
comparison compare_rows(std::vector<bench_row> base_rows, std::vector<bench_row> new_rows,
                        const compare_options& opts) {
  auto selected = [&](const bench_row& r) {
    return opts.backends.empty() || std::find(opts.backends.begin(), opts.backends.end(),
                                              r.config.backend) != opts.backends.end();
  };
  comparison c;
  c.base_rows = std::move(base_rows);
  c.new_rows = std::move(new_rows);
  const std::vector<bench_row>& base = c.base_rows;
  const std::vector<bench_row>& next = c.new_rows;
  // (of repeated configurations, which only rows made in memory can have, the last one)
  config_index next_by_config(next, next.size()), base_by_config(base, base.size());
  for (size_t i = 0; i < next.size(); ++i) next_by_config.insert(i);
  for (size_t i = 0; i < base.size(); ++i) base_by_config.insert(i);
  c.rows.reserve(base.size() + next.size());
  // A configuration skipped on one side and absent from the other says nothing (an op
  // the backend does not have, listed by one run only): it is left out.
  for (const auto& r : base) {
    if (!selected(r)) continue;
    compare_row row;
    row.config = r.config;
    row.base = &r;
    if (const size_t i = next_by_config.find(r.config); i != config_index::npos)
      row.next = &next[i];
    if (!row.next && r.status == bench_status::skipped) continue;
    decide(row, opts);
    c.rows.push_back(std::move(row));
  }
  for (const auto& n : next) {
    const bool known = base_by_config.find(n.config) != config_index::npos;
    if (known || !selected(n) || n.status == bench_status::skipped) continue;
    compare_row row;
    row.config = n.config;
    row.next = &n;
    decide(row, opts);
    c.rows.push_back(std::move(row));
  }
  return c;
}

// Geometric mean of base/new over rows timed on both sides, per backend and overall.
void summarize_speedups(comparison& c) {
  std::map<std::string, std::pair<double, size_t>> logs;
  for (const auto& row : c.rows) {
    if (!row.ratio) continue;
    for (const std::string& key : {row.config.backend, std::string()}) {
      logs[key].first += -std::log(*row.ratio);
      logs[key].second += 1;
    }
  }
  for (const auto& [backend, acc] : logs)
    if (!backend.empty())
      c.summaries.push_back({backend, acc.second, std::exp(acc.first / double(acc.second))});
  if (logs.count(""))
    c.summaries.push_back(
        {"", logs[""].second, std::exp(logs[""].first / double(logs[""].second))});
}

}  // namespace

comparison compare_results(const bench_results& base, const bench_results& next,
                           const compare_options& opts) {
  comparison c = compare_rows(base.rows, next.rows, opts);
  c.base_context = base.context;
  c.new_context = next.context;
  summarize_speedups(c);
  return c;
}

comparison compare_results(bench_results&& base, bench_results&& next,
                           const compare_options& opts) {
  comparison c = compare_rows(std::move(base.rows), std::move(next.rows), opts);
  c.base_context = std::move(base.context);
  c.new_context = std::move(next.context);
  summarize_speedups(c);
  return c;
}

gate_verdict judge_gate(const comparison& c, const gate_rule& rule) {
  gate_verdict g;
  g.rule = rule;
  for (const auto& row : c.rows) {
    if (row.ratio) ++g.compared;
    // (the name is made only for the rows listed: most rows trip nothing)
    if (row.status == verdict::broken) g.broken.push_back({row.config.name(), std::nullopt});
    if (row.status == verdict::slower && *row.ratio - 1 > rule.fail_pct / 100)
      g.slower.push_back({row.config.name(), row.ratio});
    // Timed in the base, not timed in the new run for want of a row (GONE) or of a time
    // (SKIPPED; one that failed there is BROKEN, above).
    const bool timed_in_base = row.base && row.base->status == bench_status::ok;
    if (!timed_in_base || row.status == verdict::broken) continue;
    const bool gone = !row.next;
    const bool skipped = row.next && row.next->status != bench_status::ok;
    if (!gone && !skipped) continue;
    auto& list = rule.allow_missing ? g.excused : gone ? g.gone : g.skipped;
    list.push_back({row.config.name(), std::nullopt});
  }
  return g;
}

int regression_exit_code(const comparison& c, double fail_pct) {
  return judge_gate(c, {fail_pct, false}).exit_code();
}

}  // namespace glabench
