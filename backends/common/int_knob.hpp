// An integer knob (an environment variable a backend reads that changes what it computes or
// how fast, docs/design.md §3): its value, from lo to hi, or `unset` when it is not set. Any
// other value is refused rather than replaced by the default: `unset` comes back and the
// refusal, naming the variable, goes to *error (the first refusal kept). Plain C++.
#pragma once

#include <cstdlib>
#include <string>

namespace glabench::cuda_plugin {

inline int int_knob(const char* name, int lo, int hi, int unset, std::string* error) {
  const char* env = std::getenv(name);
  if (!env || !*env) return unset;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < lo || n > hi) {
    if (error->empty())
      *error = std::string(name) + " must be an integer from " + std::to_string(lo) + " to " +
               std::to_string(hi) + ", not `" + env + "`";
    return unset;
  }
  return static_cast<int>(n);
}

}  // namespace glabench::cuda_plugin
