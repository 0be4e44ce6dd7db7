// Text made safe for one cell of a GitHub-flavoured markdown table: a '|' would end
// the cell and a newline the row.
#pragma once

#include <algorithm>
#include <string>

namespace glabench {

inline std::string markdown_cell(std::string s) {
  std::replace(s.begin(), s.end(), '|', '/');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace glabench
