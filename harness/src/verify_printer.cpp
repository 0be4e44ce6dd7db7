#include "verify_printer.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

#include "run_context.hpp"
#include "safe_text.hpp"
#include "verify_case_json.hpp"

namespace glabench {
namespace {

std::string sci(double x) {
  return std::isnan(x) ? "nan" : fmt::format("{:.2e}", x);
}

}  // namespace

void verify_printer::print_table(std::ostream& os, const std::vector<verify_case_result>& results) {
  size_t w_backend = 7, w_fixture = 7;
  for (const auto& r : results) {
    w_backend = std::max(w_backend, console_safe(r.backend).size());
    w_fixture = std::max(w_fixture, console_safe(r.fixture).size());
  }
  const std::string header =
      fmt::format("{:<{}}  {:<{}}  {:<5}  {:<6}  {:>9}  {:>9}  {:>7}  {}", "backend", w_backend,
                  "fixture", w_fixture, "dtype", "tensor", "rel_l2", "max_abs", "limit", "result");
  fmt::print(os, "{}\n{}\n", header, std::string(header.size(), '-'));
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : results) {
    // Names and messages come from plugins and file names: escaped (safe_text.hpp).
    std::string lead = fmt::format("{:<{}}  {:<{}}  {:<5}", console_safe(r.backend), w_backend,
                                   console_safe(r.fixture), w_fixture, dtype_name(r.storage));
    const std::string blank(lead.size(), ' ');
    switch (r.status) {
      case case_status::passed:
        ++passed;
        break;
      case case_status::failed:
      case case_status::crashed:
      case case_status::timeout:
        ++failed;
        break;
      default:
        ++skipped;
        break;
    }
    if (r.checks.empty()) {
      fmt::print(os, "{}  {:<6}  {:>9}  {:>9}  {:>7}  {}: {}\n", lead, "-", "", "", "",
                 case_status_name(r.status), console_safe(r.message));
      continue;
    }
    for (const auto& c : r.checks) {
      fmt::print(os, "{}  {:<6}  {:>9}  {:>9}  {:>7}  {}\n", lead, c.tensor, sci(c.rel_l2),
                 sci(c.max_abs), fmt::format("{:.0e}", c.threshold), c.passed ? "ok" : "FAIL");
      lead = blank;
    }
    if (r.gradcheck) {
      const auto& g = *r.gradcheck;
      fmt::print(os, "{}  {:<6}  {:>9}  {:>9}  {:>7}  {} ({} directions{})\n", lead, "fd",
                 sci(g.worst_error), "", fmt::format("{:.0e}", g.tolerance),
                 g.passed ? "ok" : "FAIL", g.directional.size(),
                 g.jacobian_checked ? ", full Jacobian" : "");
    }
    if (is_failure(r.status) || !r.message.empty())
      fmt::print(os, "{}  {}: {}\n", blank, case_status_name(r.status),
                 r.message.empty() ? "a check failed" : console_safe(r.message));
  }
  fmt::print(os, "\n{} passed, {} failed, {} skipped\n", passed, failed, skipped);
}

nlohmann::json verify_printer::to_json(const std::vector<verify_case_result>& results,
                                       const std::vector<const loaded_backend*>& backends) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) rows.push_back(glabench::to_json(r));
  std::vector<std::string> names;
  for (const loaded_backend* b : backends) names.push_back(b->name());
  nlohmann::json context = run_context(names);
  context["backend_builds"] = backend_builds(backends);
  return {{"glabench_results", "verify"},
          {"schema_version", 1},
          {"context", context},
          {"results", rows}};
}

}  // namespace glabench
