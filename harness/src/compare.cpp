#include "compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

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

}  // namespace

comparison compare_results(const bench_results& base, const bench_results& next,
                           const compare_options& opts) {
  auto selected = [&](const bench_row& r) {
    return opts.backends.empty() || std::find(opts.backends.begin(), opts.backends.end(),
                                              r.config.backend) != opts.backends.end();
  };
  comparison c;
  c.base_context = base.context;
  c.new_context = next.context;
  // A configuration skipped on one side and absent from the other says nothing (an op
  // the backend does not have, listed by one run only): it is left out.
  auto skipped = [](const std::optional<bench_row>& r) {
    return !r || r->status == bench_status::skipped;
  };
  // Matched through a hash table of each side's configurations: O(n) on average.
  struct config_hash {
    size_t operator()(const bench_config* c) const { return bench_config_hash()(*c); }
  };
  struct config_equal {
    bool operator()(const bench_config* a, const bench_config* b) const { return *a == *b; }
  };
  using index =
      std::unordered_map<const bench_config*, const bench_row*, config_hash, config_equal>;
  index next_by_config, base_by_config;
  next_by_config.reserve(next.rows.size());
  base_by_config.reserve(base.rows.size());
  for (const auto& n : next.rows) next_by_config.insert_or_assign(&n.config, &n);
  for (const auto& r : base.rows) base_by_config.insert_or_assign(&r.config, &r);
  c.rows.reserve(base.rows.size() + next.rows.size());
  for (const auto& r : base.rows) {
    if (!selected(r)) continue;
    compare_row row;
    row.config = r.config;
    row.base = r;
    if (auto it = next_by_config.find(&r.config); it != next_by_config.end())
      row.next = *it->second;
    if (!row.next && skipped(row.base)) continue;
    decide(row, opts);
    c.rows.push_back(std::move(row));
  }
  for (const auto& n : next.rows) {
    const bool known = base_by_config.count(&n.config) > 0;
    if (known || !selected(n) || n.status == bench_status::skipped) continue;
    compare_row row;
    row.config = n.config;
    row.next = n;
    decide(row, opts);
    c.rows.push_back(std::move(row));
  }

  // Geometric mean of base/new over rows timed on both sides, per backend and overall.
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
  return c;
}

gate_verdict judge_gate(const comparison& c, const gate_rule& rule) {
  gate_verdict g;
  g.rule = rule;
  for (const auto& row : c.rows) {
    if (row.ratio) ++g.compared;
    const std::string name = row.config.name();
    if (row.status == verdict::broken) g.broken.push_back({name, std::nullopt});
    if (row.status == verdict::slower && *row.ratio - 1 > rule.fail_pct / 100)
      g.slower.push_back({name, row.ratio});
    // Timed in the base, not timed in the new run for want of a row (GONE) or of a time
    // (SKIPPED; one that failed there is BROKEN, above).
    const bool timed_in_base = row.base && row.base->status == bench_status::ok;
    if (!timed_in_base || row.status == verdict::broken) continue;
    const bool gone = !row.next;
    const bool skipped = row.next && row.next->status != bench_status::ok;
    if (!gone && !skipped) continue;
    auto& list = rule.allow_missing ? g.excused : gone ? g.gone : g.skipped;
    list.push_back({name, std::nullopt});
  }
  return g;
}

int regression_exit_code(const comparison& c, double fail_pct) {
  return judge_gate(c, {fail_pct, false}).exit_code();
}

}  // namespace glabench
