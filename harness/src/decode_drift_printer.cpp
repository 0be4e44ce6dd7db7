#include "decode_drift_printer.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

#include "decode_drift_json.hpp"
#include "device_info.hpp"
#include "not_run_cases.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"
#include "worker_protocol.hpp"

namespace glabench {
namespace {

std::string sci(double x) {
  return std::isnan(x) ? "nan" : fmt::format("{:.2e}", x);
}

// The rel_l2 `field` of r's checkpoint at `step`, or "-" where it has none (the chain
// ended before it).
std::string at_step(const decode_drift_result& r, int64_t step, double drift_point::*field) {
  for (const drift_point& p : r.checkpoints)
    if (p.step == step) return sci(p.*field);
  return "-";
}

}  // namespace

void decode_drift_printer::print_table(std::ostream& os,
                                       const std::vector<decode_drift_result>& results,
                                       const decode_drift_options& opts,
                                       const console_style& style) {
  fmt::print(os,
             "chained decode: B{} H{} K{} V{}, {} steps of T = 1, each step's h0 the last "
             "step's ht; rel_l2 against the fp64 chain after step …\n\n",
             opts.B, opts.H, opts.K, opts.V, opts.steps);
  size_t w_backend = 7;
  for (const auto& r : results) w_backend = std::max(w_backend, console_safe(r.backend).size());
  const std::vector<int64_t> steps = drift_checkpoints(opts.steps);
  std::vector<size_t> widths;
  std::string step_header;
  for (const int64_t s : steps) {
    widths.push_back(std::max<size_t>(8, fmt::formatted_size("{}", s)));
    step_header += fmt::format("  {:>{}}", s, widths.back());
  }
  not_run_cases not_run;
  bool header_printed = false;
  case_tally tally;
  for (const auto& r : results) {
    tally.add(r.status);
    if (!is_failure(r.status) && r.status != case_status::passed) {
      not_run.add(r.backend, r.status, r.message);
      continue;
    }
    if (!header_printed) {
      const std::string header =
          fmt::format("{:<{}}  {:<5}  {:<5}  {:<5}  {:<6}  {:<5}{}  {:>18}  {:>7}  {}", "backend",
                      w_backend, "op", "dtype", "state", "gates", "tensor", step_header,
                      "max (at step)", "limit", "result");
      fmt::print(os, "{}\n{}\n", header, std::string(header.size(), '-'));
      header_printed = true;
    }
    // Names and messages come from plugins: escaped (safe_text.hpp).
    std::string lead = fmt::format("{:<{}}  {:<5}  {:<5}  {:<5}  {:<6}", console_safe(r.backend),
                                   w_backend, op_name(r.op), dtype_name(r.storage),
                                   dtype_name(r.state_storage), console_safe(r.gates));
    const std::string blank(lead.size(), ' ');
    if (r.checkpoints.empty() && r.steps_run == 0) {  // no step came back: crashed, refused, …
      fmt::print(os, "{}  {:<5}  {}: {}\n", lead, "-",
                 style.paint(case_status_name(r.status), tone::bad), console_safe(r.message));
      continue;
    }
    const bool ran = r.steps_run > 0;
    const struct {
      const char* name;
      double drift_point::*field;
      double max;
      int64_t max_step;
    } rows[] = {{"o", &drift_point::o_rel_l2, r.max_o_rel_l2, r.max_o_step},
                {"state", &drift_point::state_rel_l2, r.max_state_rel_l2, r.max_state_step}};
    for (const auto& row : rows) {
      std::string cells;
      for (size_t i = 0; i < steps.size(); ++i)
        cells += fmt::format("  {:>{}}", at_step(r, steps[i], row.field), widths[i]);
      const std::string max = ran ? fmt::format("{} ({})", sci(row.max), row.max_step) : "-";
      const bool ok = ran && r.steps_run == r.steps && row.max <= r.threshold;
      fmt::print(os, "{}  {:<5}{}  {:>18}  {:>7}  {}\n", lead, row.name, cells, max,
                 fmt::format("{:.0e}", r.threshold),
                 ok ? style.paint("ok", tone::good) : style.paint("FAIL", tone::bad));
      lead = blank;
    }
    if (is_failure(r.status))
      fmt::print(os, "{}  {}: {}\n", blank, style.paint(case_status_name(r.status), tone::bad),
                 console_safe(r.message));
  }
  if (header_printed && !not_run.empty()) fmt::print(os, "\n");
  not_run.print(os, style);
  fmt::print(os, "\n{} passed, {} failed, {} skipped\n", tally.passed, tally.failed, tally.skipped);
}

nlohmann::json decode_drift_printer::to_json(const std::vector<decode_drift_result>& results,
                                             const decode_drift_options& opts,
                                             const std::vector<std::string>& gates,
                                             const std::vector<const loaded_backend*>& backends) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) rows.push_back(glabench::to_json(r));
  nlohmann::json context = run_context(backends);
  context["backend_builds"] = backend_builds(backends);
  bool any_cuda = false;
  for (const loaded_backend* b : backends) any_cuda = any_cuda || b->table->device_type == kDLCUDA;
  context.update(describe_run_device(any_cuda, opts.devices.front()).context);
  nlohmann::json options = to_json_by(opts, worker_protocol::decode_drift_options_fields);
  options["gates"] = gates;
  options["checkpoints"] = drift_checkpoints(opts.steps);
  context["decode_drift_options"] = options;
  return {{"glabench_results", "decode_drift"},
          {"schema_version", 1},
          {"context", context},
          {"results", rows}};
}

}  // namespace glabench
