// How `glabench compare` shows a comparison: a GitHub-flavoured markdown table with the
// geometric-mean summary, or JSON. Kept apart from the verdict logic in compare.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "compare.hpp"

namespace glabench {

class comparison_printer {
 public:
  static void print_markdown(std::ostream& out, const comparison& c);
  // `fail_pct`: the gate's threshold, recorded with its exit code when given.
  static nlohmann::json to_json(const comparison& c, std::optional<double> fail_pct);
};

}  // namespace glabench
