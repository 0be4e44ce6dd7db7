#include "comparison_printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "markdown_cell.hpp"

namespace glabench {
namespace {

std::string ms(const std::optional<bench_row>& r) {
  if (!r || !r->stats) return "–";
  return fmt::format("{:.4g}", r->stats->median);
}

std::string pct_noise(const std::optional<bench_row>& r) {
  if (!r || !r->stats) return "–";
  return fmt::format("{:.1f}%", 100 * relative_noise(*r->stats));
}

// "2 rows SLOWER by more than 5% (a: +30.0%, b: +12.0%)": at most 10 named.
std::string gate_rows(const std::vector<gate_row>& rows, const std::string& what) {
  constexpr size_t kNamed = 10;
  std::string names;
  for (size_t i = 0; i < rows.size() && i < kNamed; ++i) {
    names += i ? ", " : "";
    names += console_safe(rows[i].name);
    if (rows[i].ratio) names += fmt::format(": {:+.1f}%", 100 * (*rows[i].ratio - 1));
  }
  if (rows.size() > kNamed) names += fmt::format(", and {} more", rows.size() - kNamed);
  return fmt::format("{} row{} {} ({})", rows.size(), rows.size() == 1 ? "" : "s", what, names);
}

}  // namespace

std::string comparison_printer::verdict_line(const gate_verdict& g) {
  const std::string rule = fmt::format("--fail-on-regression {}%", g.rule.fail_pct);
  const std::string over = fmt::format("SLOWER by more than {}%", g.rule.fail_pct);
  std::vector<std::string> parts;
  if (!g.slower.empty()) parts.push_back(gate_rows(g.slower, over));
  if (!g.broken.empty())
    parts.push_back(gate_rows(g.broken, "BROKEN (timed in the base, failing now)"));
  if (!g.gone.empty())
    parts.push_back(gate_rows(g.gone, "timed in the base GONE (pass --allow-missing to allow)"));
  if (!g.skipped.empty())
    parts.push_back(
        gate_rows(g.skipped, "timed in the base SKIPPED (pass --allow-missing to allow)"));
  if (g.compared == 0) parts.push_back("no row was timed in both runs: nothing was compared");
  std::string line = fmt::format("verdict: {} — {}{}: ", g.passed() ? "PASS" : "FAIL", rule,
                                 g.rule.allow_missing ? " --allow-missing" : "");
  if (parts.empty())
    line += fmt::format("{} row{} timed in both runs, none {}, BROKEN, GONE or SKIPPED", g.compared,
                        g.compared == 1 ? "" : "s", over);
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? "; " : "") + parts[i];
  if (!g.excused.empty())
    line += "; allowed by --allow-missing: " +
            gate_rows(g.excused, "timed in the base GONE or SKIPPED");
  return line;
}

void comparison_printer::print_markdown(std::ostream& out, const comparison& c,
                                        const std::optional<gate_verdict>& gate) {
  auto context_line = [](const nlohmann::json& ctx) {
    std::string line =
        fmt::format("{} · commit {} · {}", ctx.value("device", std::string("?")),
                    ctx.value("git_commit", std::string("?")), ctx.value("date", std::string("?")));
    // The backends' knobs, where any were set (run_context.hpp).
    if (const auto env = ctx.find("backend_environment"); env != ctx.end() && env->is_object())
      for (const auto& [name, value] : env->items())
        line += fmt::format(" · `{}={}`", name,
                            value.is_string() ? value.get<std::string>() : value.dump());
    return console_safe(line);  // read from a results file
  };
  out << fmt::format("**base:** {}  \n**new:** {}\n\n", context_line(c.base_context),
                     context_line(c.new_context));
  out << "| configuration | base ms | new ms | new/base | base noise | new noise | p | status | "
         "note |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& row : c.rows) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       markdown_cell(row.config.name()),
                       ms(row.base), ms(row.next),
                       row.ratio ? fmt::format("{:.3f}", *row.ratio) : "–", pct_noise(row.base),
                       pct_noise(row.next), row.p_value ? fmt::format("{:.2g}", *row.p_value) : "–",
                       verdict_name(row.status), markdown_cell(row.note));
  }
  out << "\n| backend | rows timed on both | geomean speed-up (base/new) |\n|---|---:|---:|\n";
  for (const auto& s : c.summaries)
    out << fmt::format("| {} | {} | {:.3f}× |\n",
                       s.backend.empty() ? "**all**" : markdown_cell(s.backend), s.rows,
                       s.geomean_speedup);
  std::map<std::string, int> counts;
  for (const auto& row : c.rows) ++counts[std::string(verdict_name(row.status))];
  std::string tally;
  for (const auto& [name, n] : counts)
    tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", n, name);
  out << "\n" << tally << "\n";
  if (gate) out << "\n" << verdict_line(*gate) << "\n";
}

nlohmann::json comparison_printer::to_json(const comparison& c,
                                           const std::optional<gate_verdict>& gate) {
  using nlohmann::json;
  json rows = json::array();
  rows.get_ref<json::array_t&>().reserve(c.rows.size());
  for (const auto& row : c.rows) {
    // Built field by field and moved in: nlohmann's initializer lists copy every value,
    // which costs seconds on 200,000 rows.
    json j(json::value_t::object);
    auto& o = j.get_ref<json::object_t&>();
    auto put = [&o](const char* key, json value) { o.emplace(key, std::move(value)); };
    auto median = [](const std::optional<bench_row>& r) {
      return r && r->stats ? json(r->stats->median) : json(nullptr);
    };
    auto noise = [](const std::optional<bench_row>& r) {
      return r && r->stats ? json(relative_noise(*r->stats)) : json(nullptr);
    };
    put("name", row.config.name());
    put("backend", row.config.backend);
    put("op", row.config.op);
    put("dtype", row.config.dtype);
    put("mode", row.config.mode);
    put("shape", row.config.shape());
    put("status", verdict_name(row.status));
    put("note", row.note);
    put("base_ms", median(row.base));
    put("new_ms", median(row.next));
    put("base_noise", noise(row.base));
    put("new_noise", noise(row.next));
    put("ratio", row.ratio ? json(*row.ratio) : json(nullptr));
    put("p_value", row.p_value ? json(*row.p_value) : json(nullptr));
    rows.push_back(std::move(j));
  }
  json summaries = json::array();
  for (const auto& s : c.summaries)
    summaries.push_back({{"backend", s.backend.empty() ? "all" : s.backend},
                         {"rows", s.rows},
                         {"geomean_speedup", s.geomean_speedup}});
  json j = {{"glabench_results", "compare"},
            {"base", c.base_context},
            {"new", c.new_context},
            {"geomean", std::move(summaries)}};
  j["rows"] = std::move(rows);  // (an initializer list would copy every row)
  if (gate) {
    auto names = [](const std::vector<gate_row>& rows) {
      json out = json::array();
      for (const auto& r : rows) out.push_back(r.name);
      return out;
    };
    j["fail_on_regression_pct"] = gate->rule.fail_pct;
    j["exit_code"] = gate->exit_code();
    j["gate"] = {{"rule", "--fail-on-regression"},
                 {"fail_on_regression_pct", gate->rule.fail_pct},
                 {"allow_missing", gate->rule.allow_missing},
                 {"passed", gate->passed()},
                 {"rows_compared", gate->compared},
                 {"slower", names(gate->slower)},
                 {"broken", names(gate->broken)},
                 {"gone", names(gate->gone)},
                 {"skipped", names(gate->skipped)},
                 {"allowed_missing", names(gate->excused)},
                 {"verdict", verdict_line(*gate)}};
  }
  return j;
}

}  // namespace glabench
