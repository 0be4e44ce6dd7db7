// The multi-GPU ring's ranks and world (ring_ranks.hpp), shared by its files: each rank's
// streams and buffers, the world of this process's ranks, and the rows of a tensor as
// byte ranges. Each rank keeps its shard's rows in buffers of its own: its chunks one
// after another in sequence order ([B,R,H,X], lse [B,H,R], with R the longest shard's
// rows, so one geometry fits every rank). The other concerns each have a file:
// ranks_events (the timed spans of a call), ranks_exchange (transfers between ranks),
// ranks_schedule.cu (the steps of forward and backward), ranks_gather (collect) and
// ranks_report (report_json). Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "../common/cuda_error.hpp"
#include "../common/device_guard.hpp"
#include "launch.hpp"
#include "ranks_events.hpp"
#include "ring_plan.hpp"
#include "ring_ranks.hpp"

namespace glabench::ring::ranks {

inline size_t storage_bytes(storage s) {
  return s == storage::fp64 ? 8 : s == storage::fp32 ? 4 : 2;
}
inline size_t acc_bytes(storage s) {
  return s == storage::fp64 ? 8 : 4;
}

// Some rows of a tensor as contiguous byte ranges: of a [B,R,H,X] tensor one per chunk
// and batch, of an lse [B,H,R] one per chunk, batch and head (X = 0). The rows are
// spans of that tensor's own R rows (the sequence's T, or a rank's local rows); two
// lists built from the same chunks pair up range by range.
struct byte_range {
  size_t offset, bytes;
};
std::vector<byte_range> row_ranges(const problem& p, int64_t R, int X, size_t elem,
                                   const std::vector<span>& rows);

// A shard's chunks at their local rows.
std::vector<span> local_spans(const std::vector<span>& chunks);

// Rows between two tensors, on `stream`: range i of `from` to range i of `to` (lists
// built from the same chunks).
status copy_ranges(const std::vector<byte_range>& to, char* dst, int dst_device,
                   const std::vector<byte_range>& from, const char* src, int src_device,
                   cudaStream_t stream);

// The whole of a rank's [B,R,H,X] buffer (its padding rows too: one transfer).
inline size_t buffer_bytes(const problem& lp, int X, size_t elem) {
  return size_t(lp.B) * lp.T * lp.H * X * elem;
}

struct rank_state {
  int rank = 0, device = 0;
  nccl::comm comm = nullptr;
  cudaStream_t compute = nullptr, link = nullptr;
  char* arena = nullptr;
  size_t arena_bytes = 0;
  int64_t rows = 0;  // of its shard
  // Local rows of its shard ([B,R,H,X], lse [B,H,R]).
  char *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr;
  char *d_o = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
  char *ring_k[2] = {}, *ring_v[2] = {};  // key/value shards passed in, double-buffered
  char *acc_o = nullptr, *acc_dq = nullptr, *row_dots = nullptr;
  char *acc_dk[2] = {}, *acc_dv[2] = {};  // the held keys' dk/dv sums, passed on step by step
  char *block_o = nullptr, *block_stats = nullptr;
  // cuDNN backward: a step's block gradients (double-buffered: the first step's dk/dv
  // travel to r−1 as they are), and the first step's dk/dv as they arrive from r+1.
  char *block_dq[2] = {}, *block_dk[2] = {}, *block_dv[2] = {};
  char *recv_dk = nullptr, *recv_dv = nullptr, *packed_lse = nullptr, *cudnn_workspace = nullptr;
  event_pool pool[2];  // forward, backward
  rank_clock clock[2];
};

// The caller's output tensors of the calls since the last collect().
struct pending_outputs {
  void *o = nullptr, *lse = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
};

struct world_state {
  problem p{};      // the whole sequence (T rows)
  problem local{};  // a rank's buffers (T = the longest shard's rows)
  placement where;
  bool backward = false, one_process = true;
  std::vector<rank_state> ranks;  // this process's
  std::vector<std::vector<span>> chunks;
  std::vector<std::vector<std::optional<step_block>>> steps;  // [rank][step]
  const void *io_q = nullptr, *io_k = nullptr, *io_v = nullptr, *io_do = nullptr;
  bool forward_ran = false;     // since prepare: the ranks' o and lse are the forward's
  bool next_keys_held = false;  // ring buffer (W−1) mod 2 holds r+1's keys (the forward's last)
  bool called[2] = {false, false};
  pending_outputs pending;
  double collect_ms = -1;  // the last collect()
  cudaEvent_t common_start = nullptr;
  int common_start_device = -1;
};

// The world prepare() built (none before, or after release()); every entry point holds
// the lock while it works on it.
extern std::mutex state_lock;
extern std::optional<world_state> state;

// The problem as a rank's buffers see it: T = the longest shard's rows.
problem local_problem(const problem& p, const std::vector<std::vector<span>>& chunks);

// What each rank computes at each step ([rank][step], ring_plan.hpp's rank_step).
std::vector<std::vector<std::optional<step_block>>> steps_of(
    const std::vector<std::vector<span>>& chunks, bool causal);

}  // namespace glabench::ring::ranks
