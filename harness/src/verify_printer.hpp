// Printers for verify results: the console table and the results JSON. Measuring code
// never formats; these never measure.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "backend_loader.hpp"
#include "console_style.hpp"
#include "verifier.hpp"

namespace glabench {

class verify_printer {
 public:
  // One row per checked tensor, the case's columns on its first row, then the
  // finite-difference result; a failed case ends with a line naming the failing tensors
  // (for NaN or Inf outputs: how many, and the first's index) and its message. Cases that
  // did not run (unavailable here, unsupported) get one line per backend, status and
  // reason after the table; last "N passed, N failed, N skipped". Colour as `style`
  // allows.
  static void print_table(std::ostream& os, const std::vector<verify_case_result>& results,
                          const console_style& style = console_style::with_colour(false));

  // {"glabench_results": "verify", "schema_version": 1, "context": {…}, "results": […]};
  // the context records how each of `backends` was built (context.backend_builds).
  static nlohmann::json to_json(const std::vector<verify_case_result>& results,
                                const std::vector<const loaded_backend*>& backends);
};

}  // namespace glabench
