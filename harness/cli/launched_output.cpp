// Results files under a launcher: torchrun, mpirun and srun start the same command in every
// process, so bench's and verify's --json is written once, by rank 0 (glabench/launcher.hpp;
// without a launcher, GLABENCH_NCCL_RANK).
// The other ranks still run, print their table and exit by their own outcome.
#include <fmt/format.h>

#include "commands.hpp"
#include "glabench/launcher.hpp"
#include "safe_text.hpp"

namespace glabench::cli {

bool writes_results_file(const std::string& path) {
  if (path.empty()) return false;
  const launcher::place at = launcher::ranks_place("GLABENCH");
  if (!at.error.empty() || at.world <= 1 || at.rank == 0) return true;
  fmt::print("rank {} of {} ({}): {} is written by rank 0\n", at.rank, at.world, at.launcher,
             console_safe(path));
  return false;
}

}  // namespace glabench::cli
