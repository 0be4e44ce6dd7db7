// The line of progress `verify` and `bench` keep at the bottom of a terminal: redrawn in
// place on stderr, cut to the terminal's width (a wrapped line could not be redrawn),
// and cleared before other output and at the end, so none of it stays on the screen or
// reaches a file. Off when stderr is not a terminal.
#pragma once

#include <string>

namespace glabench {

class progress_line {
 public:
  progress_line();
  ~progress_line();
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;

  bool enabled() const { return enabled_; }
  // Replaces the line with "[i/n] what" (n = 0: "      what", a step within the item).
  void show(size_t i, size_t n, const std::string& what);
  // Removes the line (before printing anything else to the terminal).
  void clear();

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace glabench
