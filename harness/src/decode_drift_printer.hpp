// Printers for decode-drift results (decode_drift.hpp): the console table and the results
// JSON. The check never formats; these never run it.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "backend_loader.hpp"
#include "console_style.hpp"
#include "decode_drift.hpp"

namespace glabench {

class decode_drift_printer {
 public:
  // A line naming the problem, then two rows per case, o and state: rel_l2 at each of
  // drift_checkpoints(opts.steps), the largest over every step (and its step), the limit
  // and ok or FAIL; a failed case ends with its message. Cases that did not run get one
  // line per backend, status and reason after the table; last "N passed, N failed, N
  // skipped". Colour as `style` allows.
  static void print_table(std::ostream& os, const std::vector<decode_drift_result>& results,
                          const decode_drift_options& opts,
                          const console_style& style = console_style::with_colour(false));

  // {"glabench_results": "decode_drift", "schema_version": 1, "context": {…}, "results":
  // […]}: the context is run_context's, how each of `backends` was built, the host and
  // device (describe_run_device), and the options (decode_drift_options: the sizes, steps,
  // seed, gate regimes, tolerance where given, devices and checkpoints).
  static nlohmann::json to_json(const std::vector<decode_drift_result>& results,
                                const decode_drift_options& opts,
                                const std::vector<std::string>& gates,
                                const std::vector<const loaded_backend*>& backends);
};

}  // namespace glabench
