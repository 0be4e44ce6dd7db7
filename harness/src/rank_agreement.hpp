// bench across processes: torchrun, mpirun and srun start the same bench in every
// process, and a multi-process backend's calls are collective, so every process must make
// the same calls. The decisions that choose them — whether a configuration runs, its
// verdict, when sampling stops — are therefore taken by all ranks: one NCCL all-reduce
// (min) each, on the bench's device, through glabench's own communicator (NCCL loaded at
// run time; its unique id in the node's rendezvous file, or GLABENCH_NCCL_ID_FILE across
// nodes: backends/common/nccl). One process (no launcher, or a world of 1): each decision
// is its own, and nothing is loaded.
#pragma once

#include <memory>

namespace glabench {

class rank_agreement {
 public:
  rank_agreement();
  ~rank_agreement();
  rank_agreement(const rank_agreement&) = delete;
  rank_agreement& operator=(const rank_agreement&) = delete;

  // Whether this process is one rank of several.
  bool across_processes() const;
  // True where every rank's `mine` is true (the communicator made at the first call, on
  // the current device). Throws std::runtime_error when NCCL fails.
  bool all(bool mine);
  // Sampling's stop: stop where any rank must (max reps, time cap) or every rank may
  // (its noise target met, or must).
  bool stop(bool must, bool may);

 private:
  void min_over_ranks(int two[2]);  // every rank's two ints, their smallest
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace glabench
