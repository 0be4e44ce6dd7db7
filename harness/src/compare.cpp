#include "compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

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
  if (b == bench_status::ok && n == bench_status::failed) {
    row.status = verdict::broken;
    row.note = row.next->message;
  } else if (b == bench_status::failed && n == bench_status::ok) {
    row.status = verdict::fixed;
  } else if (n == bench_status::failed) {
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
  for (const auto& r : base.rows) {
    if (!selected(r)) continue;
    compare_row row;
    row.config = r.config;
    row.base = r;
    for (const auto& n : next.rows)
      if (n.config == r.config) row.next = n;
    if (!row.next && skipped(row.base)) continue;
    decide(row, opts);
    c.rows.push_back(std::move(row));
  }
  for (const auto& n : next.rows) {
    const bool known = std::any_of(base.rows.begin(), base.rows.end(),
                                   [&](const bench_row& r) { return r.config == n.config; });
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

int regression_exit_code(const comparison& c, double fail_pct) {
  for (const auto& row : c.rows) {
    if (row.status == verdict::broken) return 1;
    if (row.status == verdict::slower && *row.ratio - 1 > fail_pct / 100) return 1;
  }
  return 0;
}

}  // namespace glabench
