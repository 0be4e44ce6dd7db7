// The ring across GPUs over NCCL (seed 003's ring attention): rank r holds its shard of
// q, k, v (prepared, untimed) and the key/value shards travel rank to rank on a
// communication stream, double-buffered against compute, one block per rank and step;
// backward, the key shards' dk/dv accumulators travel with them and go home after the
// last step. A call ends with each rank's outputs on its device; collect() gathers them.
// One process may drive every rank (the call's device list), or each process one rank
// (../common/nccl/nccl_link.hpp, prefix RING_SOFTMAX_CUDA). Plain C++ (the plugin includes it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../common/nccl/nccl_link.hpp"
#include "launch.hpp"

namespace glabench::ring {

namespace nccl = cuda_plugin::nccl;

// One process per rank: RING_SOFTMAX_CUDA_NCCL_WORLD, _RANK and _ID_FILE, or a launcher's.
inline const nccl::process_ranks& process_ranks() {
  return nccl::process_knobs("RING_SOFTMAX_CUDA");
}

}  // namespace glabench::ring

namespace glabench::ring::ranks {

// Who the ranks are: this process's devices (rank first_rank + i on devices[i]) in a
// world of `world` ranks. One process: first_rank 0 and every device. One process per
// rank: the process's one device.
struct placement {
  int world = 1, first_rank = 0;
  std::vector<int> devices;
};

// Copies each rank's shard of the inputs onto its device and allocates its buffers
// (untimed); `bwd` is null for forward-only work. The calls that follow must pass the
// same tensors. p.shards is the world size.
status prepare(const problem& p, const placement& where, const forward_io& fwd,
               const backward_io* bwd);
// Every device starts after what io.stream has enqueued; io.stream waits for every
// rank's end, when each rank holds the outputs of its own shard.
status run_forward(const problem& p, const forward_io& io);
status run_backward(const problem& p, const backward_io& io);
// The outputs of the calls since the last collect, into those calls' tensors, whole (in
// every process, one per rank); synchronous and untimed. Its time is in the report.
status collect();
// cuDNN's graphs for every rank's step blocks (p.shards ranks), built and cached on the
// current device; `most_workspace_bytes` the largest workspace one needs. Empty = cuDNN
// takes them all, else why not.
status plan_cudnn_steps(const problem& p, bool backward, int64_t* most_workspace_bytes);
// The last forward and backward: per-rank times, communication, and how much of it
// compute hid, as a JSON object into `text` (empty before the first call). A failed read
// of their events is the status.
status report_json(std::string* text);
// Frees what prepare kept (communicators stay for the process's life).
void release();

}  // namespace glabench::ring::ranks
