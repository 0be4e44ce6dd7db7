// Text made safe for one cell of a GitHub-flavoured markdown table: control characters
// and bytes that are not UTF-8 are escaped (safe_text.hpp; a newline would end the row),
// and a '|' would end the cell.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "safe_text.hpp"

namespace glabench {

inline std::string markdown_cell(std::string_view text) {
  std::string s = console_safe(text);
  std::replace(s.begin(), s.end(), '|', '/');
  return s;
}

}  // namespace glabench
