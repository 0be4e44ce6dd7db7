// Colour on the console: only where the stream is a terminal, and never when NO_COLOR is
// set to anything but "" (https://no-color.org). Files and pipes get plain text.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace glabench {

enum class tone {
  good,   // ok, passed
  bad,    // FAILED, CRASHED, TIMEOUT, warnings that invalidate figures
  muted,  // skips and other lines that need no action
};

class console_style {
 public:
  // Colour for `stream` when it is a terminal and NO_COLOR is unset or empty.
  explicit console_style(std::FILE* stream);
  // Fixed, for tests and callers that already decided.
  static console_style with_colour(bool on);

  bool colour() const { return colour_; }
  // `text` in the tone's colour, or as it is without colour.
  std::string paint(std::string_view text, tone t) const;

 private:
  console_style() = default;
  bool colour_ = false;
};

}  // namespace glabench
