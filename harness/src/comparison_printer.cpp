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

}  // namespace

void comparison_printer::print_markdown(std::ostream& out, const comparison& c) {
  auto context_line = [](const nlohmann::json& ctx) {
    std::string line =
        fmt::format("{} · commit {} · {}", ctx.value("device", std::string("?")),
                    ctx.value("git_commit", std::string("?")), ctx.value("date", std::string("?")));
    // The backends' knobs, where any were set (run_context.hpp).
    if (const auto env = ctx.find("backend_environment"); env != ctx.end() && env->is_object())
      for (const auto& [name, value] : env->items())
        line += fmt::format(" · `{}={}`", name,
                            value.is_string() ? value.get<std::string>() : value.dump());
    return line;
  };
  out << fmt::format("**base:** {}  \n**new:** {}\n\n", context_line(c.base_context),
                     context_line(c.new_context));
  out << "| configuration | base ms | new ms | new/base | base noise | new noise | p | status | "
         "note |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& row : c.rows) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.config.name(),
                       ms(row.base), ms(row.next),
                       row.ratio ? fmt::format("{:.3f}", *row.ratio) : "–", pct_noise(row.base),
                       pct_noise(row.next), row.p_value ? fmt::format("{:.2g}", *row.p_value) : "–",
                       verdict_name(row.status), markdown_cell(row.note));
  }
  out << "\n| backend | rows timed on both | geomean speed-up (base/new) |\n|---|---:|---:|\n";
  for (const auto& s : c.summaries)
    out << fmt::format("| {} | {} | {:.3f}× |\n", s.backend.empty() ? "**all**" : s.backend, s.rows,
                       s.geomean_speedup);
  std::map<std::string, int> counts;
  for (const auto& row : c.rows) ++counts[std::string(verdict_name(row.status))];
  std::string tally;
  for (const auto& [name, n] : counts)
    tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", n, name);
  out << "\n" << tally << "\n";
}

nlohmann::json comparison_printer::to_json(const comparison& c, std::optional<double> fail_pct) {
  using nlohmann::json;
  json rows = json::array();
  for (const auto& row : c.rows) {
    json j = {{"name", row.config.name()},
              {"backend", row.config.backend},
              {"op", row.config.op},
              {"dtype", row.config.dtype},
              {"mode", row.config.mode},
              {"shape", row.config.shape()},
              {"status", verdict_name(row.status)},
              {"note", row.note}};
    j["base_ms"] = row.base && row.base->stats ? json(row.base->stats->median) : json(nullptr);
    j["new_ms"] = row.next && row.next->stats ? json(row.next->stats->median) : json(nullptr);
    j["base_noise"] =
        row.base && row.base->stats ? json(relative_noise(*row.base->stats)) : json(nullptr);
    j["new_noise"] =
        row.next && row.next->stats ? json(relative_noise(*row.next->stats)) : json(nullptr);
    j["ratio"] = row.ratio ? json(*row.ratio) : json(nullptr);
    j["p_value"] = row.p_value ? json(*row.p_value) : json(nullptr);
    rows.push_back(j);
  }
  json summaries = json::array();
  for (const auto& s : c.summaries)
    summaries.push_back({{"backend", s.backend.empty() ? "all" : s.backend},
                         {"rows", s.rows},
                         {"geomean_speedup", s.geomean_speedup}});
  json j = {{"glabench_results", "compare"},
            {"base", c.base_context},
            {"new", c.new_context},
            {"rows", rows},
            {"geomean", summaries}};
  if (fail_pct) {
    j["fail_on_regression_pct"] = *fail_pct;
    j["exit_code"] = regression_exit_code(c, *fail_pct);
  }
  return j;
}

}  // namespace glabench
