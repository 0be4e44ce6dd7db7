// How `glabench compare` shows a comparison: a GitHub-flavoured markdown table with the
// geometric-mean summary, or JSON. Kept apart from the verdict logic in compare.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "compare.hpp"

namespace glabench {

class comparison_printer {
 public:
  // `gate`, when the gate ran: its verdict line ends the markdown, after the tally.
  static void print_markdown(std::ostream& out, const comparison& c,
                             const std::optional<gate_verdict>& gate = std::nullopt);
  // `gate`, when the gate ran: its rule, the rows that tripped it, its verdict line and
  // its exit code are recorded.
  static nlohmann::json to_json(const comparison& c, const std::optional<gate_verdict>& gate);
  // The text write_json_file writes for to_json(c, gate), byte for byte, made row by row
  // (for write_text_file: several times faster on many rows).
  static std::string json_text(const comparison& c, const std::optional<gate_verdict>& gate);
  // "verdict: FAIL — --fail-on-regression 5%: 2 rows SLOWER by more than 5% (…), 1 row
  // GONE (…)", or "verdict: PASS — …": the rule, the threshold and what tripped it.
  static std::string verdict_line(const gate_verdict& gate);
  // "`fla.chunk_gla` 0.5.0 → 0.6.0": each backend both results files record
  // (context.backend_builds) whose version string differs, console-safe; "" if none.
  static std::string changed_versions(const nlohmann::json& base_context,
                                      const nlohmann::json& new_context);
};

}  // namespace glabench
