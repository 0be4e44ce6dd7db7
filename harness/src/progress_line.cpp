#include "progress_line.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "safe_text.hpp"

namespace glabench {
namespace {

size_t terminal_columns() {
  winsize w{};
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0 ? w.ws_col : 80;
}

// At most `columns` code points of UTF-8 text (the escaped text holds no controls).
std::string cut(const std::string& text, size_t columns) {
  size_t points = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && ++points > columns)
      return text.substr(0, i);
  return text;
}

}  // namespace

progress_line::progress_line() : enabled_(isatty(STDERR_FILENO)) {}

progress_line::~progress_line() {
  clear();
}

void progress_line::show(size_t i, size_t n, const std::string& what) {
  if (!enabled_) return;
  const std::string line =
      n ? fmt::format("[{}/{}] {}", i, n, console_safe(what)) : "      " + console_safe(what);
  fmt::print(stderr, "\r\033[K{}", cut(line, terminal_columns() - 1));
  std::fflush(stderr);
  shown_ = true;
}

void progress_line::clear() {
  if (!shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace glabench
