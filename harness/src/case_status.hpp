// How one case of a check ended — a `glabench verify` case (verifier.hpp) or a chained
// decode (decode_drift.hpp) — its name in results files, and the exit code of a run of
// cases (docs/design.md §5).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace glabench {

class backend_call_error;

enum class case_status {
  passed,
  failed,       // a check failed, or the backend returned an error on a problem it accepts
  unsupported,  // the backend does not handle this op, dtype or problem
  unavailable,  // the backend cannot run on this machine (no GPU)
  crashed,      // the worker running the case died: a signal or an exit (message: which)
  timeout,      // a backend call ran past the time limit and its worker was killed
  skipped,      // not run: the backend timed out in the cases before (message: which)
};
// Whether a case counts as a failure (exit code 1): failed, crashed or timed out.
bool is_failure(case_status s);
std::string_view case_status_name(case_status s);
std::optional<case_status> parse_case_status(std::string_view name);

// A case ended by a backend_call_error: unavailable or unsupported where the backend
// refused beforehand (no device; refused by supports() or not offered the problem), else
// failed — a refusal in a call, after device_available() and supports() said yes, is a
// failure.
case_status status_of(const backend_call_error& e);

// A run's count of cases by outcome, for its closing line "P passed, F failed, S
// skipped": failures (is_failure), passes, and the rest (not run) as skipped.
struct case_tally {
  int passed = 0, failed = 0, skipped = 0;
  void add(case_status s) {
    ++(is_failure(s) ? failed : s == case_status::passed ? passed : skipped);
  }
};

// Exit code of a run of cases: 1 if any failed, crashed or timed out; 77 if none ran
// (all unsupported, unavailable or skipped); else 0.
int cases_exit_code(const std::vector<case_status>& statuses);

}  // namespace glabench
