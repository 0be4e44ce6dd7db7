#include "verify_printer.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "not_run_cases.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"
#include "verify_case_json.hpp"

namespace glabench {
namespace {

std::string sci(double x) {
  return std::isnan(x) ? "nan" : fmt::format("{:.2e}", x);
}

// A failed case's closing line: the tensors that failed (with the count and first index
// of NaN or Inf values), the finite-difference check, and the message.
std::string failure_text(const verify_case_result& r) {
  std::vector<std::string> parts;
  for (const auto& c : r.checks)
    if (!c.passed) parts.push_back(describe_failure(c));
  std::string text;
  if (!parts.empty())
    text = fmt::format("{} {}", parts.size() == 1 ? "tensor" : "tensors", fmt::join(parts, ", "));
  if (r.gradcheck && !r.gradcheck->passed)
    text += std::string(text.empty() ? "" : "; ") + "the finite-difference check";
  if (!r.message.empty()) text += (text.empty() ? "" : "; ") + console_safe(r.message);
  return text.empty() ? "a check failed" : text;
}

}  // namespace

void verify_printer::print_table(std::ostream& os, const std::vector<verify_case_result>& results,
                                 const console_style& style) {
  size_t w_backend = 7, w_fixture = 7;
  for (const auto& r : results) {
    w_backend = std::max(w_backend, console_safe(r.backend).size());
    w_fixture = std::max(w_fixture, console_safe(r.fixture).size());
  }
  // Cases that did not run (unavailable here, unsupported) are not listed one by one:
  // one line per backend, status and reason, after the table.
  not_run_cases not_run;
  bool header_printed = false;
  case_tally tally;
  for (const auto& r : results) {
    tally.add(r.status);
    if (r.checks.empty() && !is_failure(r.status) && r.status != case_status::passed) {
      not_run.add(r.backend, r.status, r.message);
      continue;
    }
    if (!header_printed) {
      const std::string header = fmt::format(
          "{:<{}}  {:<{}}  {:<5}  {:<6}  {:>9}  {:>9}  {:>7}  {}", "backend", w_backend, "fixture",
          w_fixture, "dtype", "tensor", "rel_l2", "max_abs", "limit", "result");
      fmt::print(os, "{}\n{}\n", header, std::string(header.size(), '-'));
      header_printed = true;
    }
    // Names and messages come from plugins and file names: escaped (safe_text.hpp).
    std::string lead = fmt::format("{:<{}}  {:<{}}  {:<5}", console_safe(r.backend), w_backend,
                                   console_safe(r.fixture), w_fixture, dtype_name(r.storage));
    const std::string blank(lead.size(), ' ');
    if (r.checks.empty()) {
      fmt::print(os, "{}  {:<6}  {:>9}  {:>9}  {:>7}  {}: {}\n", lead, "-", "", "", "",
                 style.paint(case_status_name(r.status), tone::bad), console_safe(r.message));
      continue;
    }
    for (const auto& c : r.checks) {
      // A pass by the underflow credit says so (tensor_check.hpp).
      const std::string credit =
          c.passed && !(c.rel_l2 <= c.threshold)
              ? fmt::format(
                    " (the dtype cannot hold {:.2g} of the reference's norm: it lies "
                    "below the normal range)",
                    c.underflow)
              : "";
      fmt::print(os, "{}  {:<6}  {:>9}  {:>9}  {:>7}  {}{}\n", lead, c.tensor, sci(c.rel_l2),
                 sci(c.max_abs), fmt::format("{:.0e}", c.threshold),
                 c.passed ? style.paint("ok", tone::good) : style.paint("FAIL", tone::bad), credit);
      lead = blank;
    }
    if (r.state_storage && *r.state_storage != r.storage)
      fmt::print(os, "{}  states (h0, ht, dh0, dht) in {}\n", blank, dtype_name(*r.state_storage));
    if (r.gradcheck) {
      const auto& g = *r.gradcheck;
      fmt::print(os, "{}  {:<6}  {:>9}  {:>9}  {:>7}  {} ({} directions{})\n", lead, "fd",
                 sci(g.worst_error), "", fmt::format("{:.0e}", g.tolerance),
                 g.passed ? style.paint("ok", tone::good) : style.paint("FAIL", tone::bad),
                 g.directional.size(), g.jacobian_checked ? ", full Jacobian" : "");
    }
    if (is_failure(r.status))
      fmt::print(os, "{}  {}: {}\n", blank, style.paint(case_status_name(r.status), tone::bad),
                 failure_text(r));
    else if (!r.message.empty())
      fmt::print(os, "{}  {}: {}\n", blank, case_status_name(r.status), console_safe(r.message));
  }
  if (header_printed && !not_run.empty()) fmt::print(os, "\n");
  not_run.print(os, style);
  fmt::print(os, "\n{} passed, {} failed, {} skipped\n", tally.passed, tally.failed, tally.skipped);
}

nlohmann::json verify_printer::to_json(const std::vector<verify_case_result>& results,
                                       const std::vector<const loaded_backend*>& backends) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) rows.push_back(glabench::to_json(r));
  nlohmann::json context = run_context(backends);
  context["backend_builds"] = backend_builds(backends);
  return {{"glabench_results", "verify"},
          {"schema_version", 1},
          {"context", context},
          {"results", rows}};
}

}  // namespace glabench
