#include "not_run_cases.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>

#include "safe_text.hpp"

namespace glabench {

void not_run_cases::add(const std::string& backend, case_status status,
                        const std::string& message) {
  const auto key = std::make_tuple(backend, status, message);
  auto it = std::find_if(groups_.begin(), groups_.end(),
                         [&](const auto& group) { return group.first == key; });
  if (it == groups_.end()) it = groups_.insert(groups_.end(), {key, 0});
  ++it->second;
}

void not_run_cases::print(std::ostream& os, const console_style& style) const {
  for (const auto& [key, count] : groups_) {
    const auto& [backend, status, message] = key;
    fmt::print(os, "{}\n",
               style.paint(fmt::format("{}: {} case{} {}: {}", console_safe(backend), count,
                                       count == 1 ? "" : "s", case_status_name(status),
                                       console_safe(message)),
                           tone::muted));
  }
}

}  // namespace glabench
