// What the fuzz targets do with an exception that is not the reader's own.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

namespace glabench::fuzz {

// By default such an exception is tolerated: the tool catches every std::exception,
// reports it and exits 2. With GLABENCH_FUZZ_STRICT=1 in the environment it aborts, so a
// message that does not come from the reader (naming file, field and rule) is a finding.
inline void unexpected_exception(const std::exception& e, const char* expected) {
  static const bool strict = [] {
    const char* s = std::getenv("GLABENCH_FUZZ_STRICT");
    return s && *s && std::string_view(s) != "0";
  }();
  if (!strict) return;
  std::fprintf(stderr, "unexpected exception (not a %s): %s\n", expected, e.what());
  std::abort();
}

}  // namespace glabench::fuzz
