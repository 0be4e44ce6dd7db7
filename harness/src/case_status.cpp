#include "case_status.hpp"

#include "backend_runner.hpp"

namespace glabench {

namespace {
constexpr case_status kAllStatuses[] = {
    case_status::passed,  case_status::failed,  case_status::unsupported, case_status::unavailable,
    case_status::crashed, case_status::timeout, case_status::skipped};
}  // namespace

std::string_view case_status_name(case_status s) {
  switch (s) {
    case case_status::passed:
      return "passed";
    case case_status::failed:
      return "failed";
    case case_status::unsupported:
      return "unsupported";
    case case_status::unavailable:
      return "unavailable";
    case case_status::crashed:
      return "crashed";
    case case_status::timeout:
      return "timeout";
    case case_status::skipped:
      return "skipped";
  }
  return "?";
}

std::optional<case_status> parse_case_status(std::string_view name) {
  for (case_status s : kAllStatuses)
    if (case_status_name(s) == name) return s;
  return std::nullopt;
}

bool is_failure(case_status s) {
  return s == case_status::failed || s == case_status::crashed || s == case_status::timeout;
}

case_status status_of(const backend_call_error& e) {
  return !e.refused_beforehand()                  ? case_status::failed
         : e.status() == GLABENCH_ERROR_NO_DEVICE ? case_status::unavailable
                                                  : case_status::unsupported;
}

int cases_exit_code(const std::vector<case_status>& statuses) {
  bool any_ran = false;
  for (const case_status s : statuses) {
    if (is_failure(s)) return 1;
    any_ran = any_ran || s == case_status::passed;
  }
  return any_ran ? 0 : 77;
}

}  // namespace glabench
