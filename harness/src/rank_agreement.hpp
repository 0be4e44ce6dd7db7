// bench across processes: torchrun, mpirun and srun start the same bench in every
// process, and a multi-process backend's calls are collective, so every process must make
// the same calls. The decisions that choose them for a CUDA backend — whether a
// configuration goes on past each step that may fail on one rank, when sampling stops —
// are therefore taken by all ranks: one NCCL all-reduce (min) each, on the bench's first
// device, through glabench's own communicator (NCCL loaded at run time; its unique id in
// the node's rendezvous file, or GLABENCH_NCCL_ID_FILE across nodes:
// backends/common/nccl). Each carries a step count, so ranks out of step are an error, not
// a hang. A world of one rank comes from the launcher's variables or from
// GLABENCH_NCCL_WORLD, _RANK and _ID_FILE (with a backend's own fallback variables, set
// these too). One process: each decision is its own, and nothing is loaded.
#pragma once

#include <memory>

namespace glabench {

class rank_agreement {
 public:
  explicit rank_agreement(int device);
  ~rank_agreement();
  rank_agreement(const rank_agreement&) = delete;
  rank_agreement& operator=(const rank_agreement&) = delete;

  // Whether this process is one rank of several.
  bool across_processes() const;
  // True where every rank's `mine` is true (the communicator made at the first call).
  // Throws std::runtime_error when NCCL fails or the ranks are out of step.
  bool all(bool mine);
  // Sampling's stop: stop where any rank must (max reps, time cap) or every rank may
  // (its noise target met, or must).
  bool stop(bool must, bool may);

 private:
  void min_over_ranks(int two[2]);  // every rank's two flags, their smallest
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace glabench
