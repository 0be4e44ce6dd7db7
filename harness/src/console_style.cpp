#include "console_style.hpp"

#include <unistd.h>

#include <cstdlib>

namespace glabench {

console_style::console_style(std::FILE* stream) {
  const char* no_colour = std::getenv("NO_COLOR");
  colour_ = isatty(fileno(stream)) && !(no_colour && *no_colour);
}

console_style console_style::with_colour(bool on) {
  console_style s;
  s.colour_ = on;
  return s;
}

std::string console_style::paint(std::string_view text, tone t) const {
  if (!colour_) return std::string(text);
  const char* start = t == tone::good ? "\033[32m" : t == tone::bad ? "\033[1;31m" : "\033[2m";
  return start + std::string(text) + "\033[0m";
}

}  // namespace glabench
