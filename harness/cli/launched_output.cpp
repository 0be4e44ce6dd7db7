// Results files under a launcher: torchrun, mpirun and srun start the same command in every
// process, so bench's and verify's --json is written once, by rank 0 (glabench/launcher.hpp).
// The other ranks still run, print their table and exit by their own outcome.
#include <fmt/format.h>

#include "commands.hpp"
#include "glabench/launcher.hpp"
#include "safe_text.hpp"

namespace glabench::cli {

bool writes_results_file(const std::string& path) {
  const launcher::place launched = launcher::launcher_place();
  if (path.empty() || !launched.error.empty() || launched.world <= 1 || launched.rank == 0)
    return !path.empty();
  fmt::print("rank {} of {} ({}): {} is written by rank 0\n", launched.rank, launched.world,
             launched.launcher, console_safe(path));
  return false;
}

}  // namespace glabench::cli
