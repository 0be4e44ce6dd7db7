// The cases of a run that did not run here (unsupported, unavailable, skipped), which a
// console table does not list one by one: one line per backend, status and reason after
// the table ("naive_recurrent: 2 cases unsupported: no gla forward in bf16"). verify's and
// decode-drift's tables share it.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "case_status.hpp"
#include "console_style.hpp"

namespace glabench {

class not_run_cases {
 public:
  void add(const std::string& backend, case_status status, const std::string& message);
  bool empty() const { return groups_.empty(); }
  // One muted line per group, in the order first seen; names and messages escaped.
  void print(std::ostream& os, const console_style& style) const;

 private:
  std::vector<std::pair<std::tuple<std::string, case_status, std::string>, size_t>> groups_;
};

}  // namespace glabench
