// The launcher's own rendezvous for a job that mpirun (or srun with an MPI plugin)
// started: glabench loads MPI at run time (never linked), and rank 0's glabench serves the
// id store (backends/common/nccl/id_store.hpp) and broadcasts its address to every rank
// with one MPI_Bcast, then MPI is finalized, before any worker starts. Workers find the
// store in GLABENCH_ID_STORE, so NCCL's unique id crosses nodes with no shared
// filesystem and no glabench variable. Where MPI is not there (no MPI launcher's
// variables, no libmpi, GLABENCH_MPI=0, or MPI's world is not the launcher's) the
// rendezvous file stays the way (glabench/launcher.hpp); a backend's own
// <PREFIX>_NCCL_ID_FILE wins over the store. Every rank must take the same way: an MPI
// rank that does not start MPI (GLABENCH_MPI or the library differing between nodes)
// leaves the others waiting in MPI_Init.
#pragma once

#include <string>

#include "glabench/launcher.hpp"

namespace glabench {

struct mpi_rendezvous_result {
  bool wanted = false;  // a launcher whose rendezvous is MPI started this rank
  bool used = false;    // the store's address was shared by MPI
  std::string note;     // why not, or which MPI
};

// Which MPI library to load for the launcher that started this process
// (glabench/launcher.hpp's launcher_place): Open MPI's under its mpirun, an MPICH-ABI one
// (MPICH, Intel MPI, MVAPICH) under theirs, either under srun with an MPI plugin (PMIX_RANK
// or PMI_RANK); none for one process, torchrun, or srun without a plugin. `env` reads a
// variable (tests pass their own).
struct mpi_choice {
  bool wanted = false;
  bool open_mpi = false;  // else the MPICH ABI, or whichever loads
  std::string why_not;
  launcher::place at;  // the launcher's rank and world
};
template <class Env>
mpi_choice choose_mpi(Env env) {
  auto set = [&](const char* n) {
    const char* v = env(n);
    return v && *v;
  };
  mpi_choice c;
  c.at = launcher::launcher_place(env);
  const bool srun_plugin = set("PMIX_RANK") || set("PMI_RANK");
  if (const char* off = env("GLABENCH_MPI"); off && std::string(off) == "0")
    c.why_not = "GLABENCH_MPI=0";
  else if (c.at.launcher.empty() || (c.at.launcher == "srun" && !srun_plugin))
    c.why_not = "not started by mpirun or by srun with an MPI plugin";
  else if (c.at.world <= 1)
    c.why_not = "one process";
  else if (!c.at.error.empty())
    c.why_not = c.at.launcher + ": " + c.at.error;
  else if (c.at.launcher == "torchrun")
    c.why_not = "started by torchrun";
  else
    c.wanted = true, c.open_mpi = c.at.launcher == "mpirun (Open MPI)";
  return c;
}

// Whether MPI's world is the launcher's: a libmpi that cannot reach the launcher (another
// MPI's, srun's plugin it was not built for) starts each process alone, rank 0 of 1.
inline bool same_world(int mpi_rank, int mpi_size, int launcher_rank, int launcher_world) {
  return mpi_rank == launcher_rank && mpi_size == launcher_world;
}

// Runs the rendezvous where choose_mpi wants it (call once, in the glabench a launcher
// started, before any worker; glabench does for bench, verify and decode-drift) and sets
// GLABENCH_ID_STORE. Rank 0 broadcasts its store's address, or nothing where it could not
// serve one, so every rank leaves MPI alike; the note says why the store is not used.
// (An MPI_Init that fails aborts the process: MPI's rule, not glabench's.)
mpi_rendezvous_result share_id_store_by_mpi();

}  // namespace glabench
