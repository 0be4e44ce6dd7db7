#include "child_status.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cstring>

namespace glabench {

std::string how_child_ended(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return "ended";
}

}  // namespace glabench
