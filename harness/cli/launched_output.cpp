// Results files under a launcher: torchrun, mpirun and srun start the same command in every
// process, so bench's and verify's --json is written once, by rank 0 (glabench/launcher.hpp;
// without a launcher, GLABENCH_NCCL_RANK).
// The other ranks still run, print their table and exit by their own outcome.
#include <fmt/format.h>

#include <cstdlib>

#include "commands.hpp"
#include "glabench/launcher.hpp"
#include "safe_text.hpp"

namespace glabench::cli {

namespace {

// Without a launcher, glabench's own ranks (GLABENCH_NCCL_WORLD and _RANK, as bench's
// agreement takes them: docs/design.md); a value that is not a number counts as unset.
int glabench_rank_variable(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return *end == '\0' && n >= 0 && n <= 1'000'000 ? static_cast<int>(n) : -1;
}

}  // namespace

bool writes_results_file(const std::string& path) {
  if (path.empty()) return false;
  launcher::place at = launcher::launcher_place();
  if (at.error.empty() && at.world <= 1) {
    at.launcher = "GLABENCH_NCCL_WORLD";
    at.world = glabench_rank_variable("GLABENCH_NCCL_WORLD");
    at.rank = glabench_rank_variable("GLABENCH_NCCL_RANK");
  }
  if (!at.error.empty() || at.world <= 1 || at.rank <= 0) return true;
  fmt::print("rank {} of {} ({}): {} is written by rank 0\n", at.rank, at.world, at.launcher,
             console_safe(path));
  return false;
}

}  // namespace glabench::cli
