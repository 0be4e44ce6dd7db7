// Which process of a multi-process job this is, read from the launcher's own variables,
// so that a job started by torchrun, mpirun or srun needs no glabench variable: its rank,
// the world's size, its rank on its node (the GPU it takes) and the job's id. The harness
// gives a launched process its node-local GPU (`--devices` default); a multi-GPU backend
// (the ring) its rank and world. Header-only C++17, no CUDA; harness/tests checks each
// launcher's variables.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <string>

namespace glabench::launcher {

struct place {
  std::string launcher;  // "torchrun", "mpirun (Open MPI)", "mpirun (MPICH)", "srun"; empty: none
  int rank = 0, world = 1, local_rank = 0;
  // The processes on this node: the launcher's count (the largest of srun's per-node
  // counts), else the world; never fewer than local_rank + 1. For sharing the node's
  // memory, not for addressing.
  int local_world = 1;
  std::string job;  // the job's id where the launcher gives one, else empty
  // What every rank of this job on this node shares and no other job running there does,
  // where the launcher gives it (torchrun: its store's MASTER_PORT), else empty.
  std::string instance;
  std::string error;  // a launcher's variable that does not hold a rank
};

// A variable's value, or null when unset (std::getenv by default; tests pass their own).
using environment = std::function<const char*(const char*)>;

namespace detail {
// The largest count in a Slurm tasks-per-node list ("4", "2(x3),1"); 0 when none.
inline int largest_count(const char* text) {
  int most = 0;
  for (const char* at = text; at && *at;) {
    char* end = nullptr;
    const long n = std::strtol(at, &end, 10);
    if (end == at) break;
    if (n > most && n <= 1'000'000) most = static_cast<int>(n);
    at = end;
    while (*at && *at != ',') ++at;
    if (*at == ',') ++at;
  }
  return most;
}

inline bool read_int(const environment& env, const char* name, int* out, std::string* error) {
  const char* text = env(name);
  if (!text || !*text) {
    if (error->empty()) *error = std::string(name) + " is not set";
    return false;
  }
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 0 || n > 1'000'000) {
    if (error->empty())
      *error = std::string(name) + " must be an integer from 0 to 1000000, not `" + text + "`";
    return false;
  }
  *out = static_cast<int>(n);
  return true;
}
}  // namespace detail

// The first launcher whose variables are set, in this order: torchrun (RANK, WORLD_SIZE,
// LOCAL_RANK; job TORCHELASTIC_RUN_ID.TORCHELASTIC_RESTART_COUNT, so a restarted group
// meets anew), Open MPI's mpirun (OMPI_COMM_WORLD_RANK, _SIZE,
// _LOCAL_RANK; job OMPI_MCA_ess_base_jobid), MPICH's and Intel MPI's (PMI_RANK, PMI_SIZE,
// MPI_LOCALRANKID), Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; job
// SLURM_JOB_ID.SLURM_STEP_ID — only inside a job step, so a batch script's own shell is
// not taken for rank 0 of its tasks). torchrun inside srun is torchrun's. None: one process.
inline place launcher_place(const environment& env = [](const char* n) { return std::getenv(n); }) {
  struct scheme {
    const char *name, *rank, *world, *local, *job, *step, *requires_set, *instance, *local_world;
  };
  static const scheme schemes[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID",
       "TORCHELASTIC_RESTART_COUNT", "WORLD_SIZE", "MASTER_PORT", "LOCAL_WORLD_SIZE"},
      {"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_MCA_ess_base_jobid", nullptr, "OMPI_COMM_WORLD_SIZE",
       nullptr, "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"mpirun (MPICH)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", nullptr, nullptr, "PMI_SIZE",
       nullptr, "MPI_LOCALNRANKS"},
      {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_ID", "SLURM_STEP_ID",
       "SLURM_STEP_ID", nullptr, "SLURM_STEP_TASKS_PER_NODE"},
  };
  auto value = [&](const char* name) -> std::string {
    const char* v = name ? env(name) : nullptr;
    return v ? v : "";
  };
  place p;
  for (const scheme& s : schemes) {
    const char* marker = env(s.requires_set);
    if (!marker || !*marker) continue;
    p.launcher = s.name;
    if (!detail::read_int(env, s.world, &p.world, &p.error) ||
        !detail::read_int(env, s.rank, &p.rank, &p.error))
      return p;
    // The node-local rank: the launcher's, else srun's (an MPI started by srun without its
    // own), else the rank (one node).
    const char* local = env(s.local) && *env(s.local)                   ? s.local
                        : env("SLURM_LOCALID") && *env("SLURM_LOCALID") ? "SLURM_LOCALID"
                                                                        : nullptr;
    if (local) {
      if (!detail::read_int(env, local, &p.local_rank, &p.error)) return p;
    } else {
      p.local_rank = p.rank;
    }
    if (p.world < 1)
      p.error = std::string(s.world) + " must be at least 1";
    else if (p.rank >= p.world)
      p.error = std::string(s.rank) + " must be below " + s.world + " (" + std::to_string(p.world) +
                "), not " + std::to_string(p.rank);
    const int counted = detail::largest_count(value(s.local_world).c_str());
    p.local_world = std::max(counted > 0 ? counted : p.world, p.local_rank + 1);
    p.job = value(s.job);
    p.instance = value(s.instance);
    if (!p.job.empty() && !value(s.step).empty()) p.job.append(".").append(value(s.step));
    return p;
  }
  return p;
}

// Where rank 0 leaves a small secret for the others when no other rendezvous is there (the
// documented fallback, e.g. NCCL's unique id): a file in the node's temporary folder
// (TMPDIR, else /tmp) named by the job's id and by what this job's ranks on the node share:
// the launcher's instance (torchrun's store port; its ranks' parents differ), else the
// launcher's process (the parent every local rank shares: mpirun's daemon, srun's stepd),
// so one node's ranks meet, and no earlier job's file is read. Across nodes a backend's
// own variable names a file on a filesystem every node sees.
inline std::string rendezvous_file(
    const place& p, const std::string& what, long parent,
    const environment& env = [](const char* n) { return std::getenv(n); }) {
  std::string safe;
  for (char c : p.job) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '.') ? c : '_';
  std::string shared;
  for (char c : p.instance) shared += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  const char* tmp = env("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/glabench-" + what + "-" +
         (safe.empty() ? "" : safe + "-") +
         (shared.empty() ? std::to_string(parent) : "i" + shared);
}
// The launcher's process on this node: glabench's parent. A backend runs in a worker
// (`glabench __worker`), glabench's own child, so glabench hands its parent down in
// GLABENCH_LAUNCHER_PID (launcher_pid_variable); a process without it is glabench itself.
constexpr const char* launcher_pid_variable = "GLABENCH_LAUNCHER_PID";
inline long launcher_process(
    long own_parent, const environment& env = [](const char* n) { return std::getenv(n); }) {
  const char* v = env(launcher_pid_variable);
  if (!v || !*v) return own_parent;
  char* end = nullptr;
  const long pid = std::strtol(v, &end, 10);
  return *end == '\0' && pid > 0 ? pid : own_parent;
}
inline std::string rendezvous_file(const place& p, const std::string& what) {
  return rendezvous_file(p, what, launcher_process(static_cast<long>(getppid())));
}

// When the glabench a launcher started began (seconds since the epoch), handed to its
// workers in GLABENCH_STARTED; 0 when unknown. A rendezvous file older than this, by more
// than the launcher's spread between its ranks' starts, is an earlier run's.
constexpr const char* started_variable = "GLABENCH_STARTED";
inline long long glabench_started(const environment& env = [](const char* n) {
  return std::getenv(n);
}) {
  const char* v = env(started_variable);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long long t = std::strtoll(v, &end, 10);
  return *end == '\0' && t > 0 ? t : 0;
}

// A process's place among one multi-process party's ranks (a backend's, prefix e.g.
// "RING_SOFTMAX_CUDA", or glabench's own, "GLABENCH"): <prefix>_NCCL_WORLD and
// <prefix>_NCCL_RANK where the world is set (the fallback for processes no launcher
// started; read first, so they override one), else the launcher's. `launcher` names
// <prefix>_NCCL_WORLD when the variables gave it; `error` names a variable that holds no
// rank.
inline place ranks_place(
    const std::string& prefix,
    const environment& env = [](const char* n) { return std::getenv(n); }) {
  const std::string world_name = prefix + "_NCCL_WORLD", rank_name = prefix + "_NCCL_RANK";
  const char* world = env(world_name.c_str());
  if (!world || !*world) return launcher_place(env);
  place p;
  p.launcher = world_name;
  int w = 0, r = -1;
  auto number = [&](const std::string& name, const char* text, int* out) {
    char* end = nullptr;
    const long n = text ? std::strtol(text, &end, 10) : -1;
    if (!text || !*text || *end != '\0' || n < 0 || n > 4096) {
      if (p.error.empty())
        p.error = name + " must be an integer from 0 to 4096, not `" + (text ? text : "") + "`";
      return false;
    }
    *out = static_cast<int>(n);
    return true;
  };
  if (!number(world_name, world, &w)) return p;
  if (w < 1) {
    p.error = world_name + " must be at least 1";
    return p;
  }
  const char* rank = env(rank_name.c_str());
  if (!rank || !*rank || !number(rank_name, rank, &r) || r >= w) {
    p.error = rank_name + " must be set, from 0 to " + world_name + " − 1";
    return p;
  }
  p.world = w;
  p.rank = r;
  p.local_rank = r;
  return p;
}

}  // namespace glabench::launcher
