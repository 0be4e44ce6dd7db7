// Sequence-parallel gla (README, "Sequence parallelism"): the sequence split across W
// ranks, rank r holding tokens [r·T/W, (r+1)·T/W) of every batch row, each rank's tokens
// a call of their own on its device. Either one process drives every rank (the call's
// devices, each taking CHUNKED_FUSE_CUDA_RANKS_PER_DEVICE consecutive ranks) and the copy
// engines move what crosses between ranks, or each process is one rank (a launcher's
// variables or CHUNKED_FUSE_CUDA_NCCL_*: ../common/nccl/nccl_link.hpp) and NCCL moves it.
// What crosses is one contribution per rank (launch.hpp), a few K×V states per head,
// never tokens. With head groups (CHUNKED_FUSE_CUDA_HEAD_GROUPS) a rank's heads run as G
// calls: every group's step 1 first, then group by group steps 3–4, each group's step 2
// on the rank's exchange stream beside them, so it hides behind the later groups' first
// passes and the earlier groups' walks.
//
//   forward   1. each rank's contribution: L and G (its first passes, folded);
//             2. each rank gathers the contributions of the ranks before it;
//             3. carry: h0 across ranks 0 … r−1 (S ← 2^G·S + L);
//             4. the rank's walk from the carried state; the last rank's ht is the call's.
//   backward  the same with D too: rank r also gathers the ranks after it, and its dS walk
//             starts from dht carried back across ranks W−1 … r+1; rank 0's dh0 is the
//             call's.
//
// prepare() copies each rank's tokens to its device once, untimed; forward and backward
// leave each rank's outputs on its device; collect() brings them into the caller's
// tensors (one process per rank: every process's, by broadcasts). Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../common/cuda_error.hpp"
#include "../common/nccl/nccl_link.hpp"
#include "launch.hpp"

namespace glabench::chunked::sequence {

using cuda_plugin::status;

// Rank r's tokens of a sequence of T split among W ranks: [r·T/W, (r+1)·T/W).
struct token_part {
  int64_t first, count;
};
inline token_part part_of(int64_t T, int W, int r) {
  const int64_t first = T * r / W, last = T * (r + 1) / W;
  return {first, last - first};
}

// Who the ranks are: this process's ranks first_rank, first_rank + 1, … on `devices` (one
// entry a rank) in a world of `world` ranks. One process: first_rank 0, every rank. One
// process per rank: its one rank and device, and `process` for NCCL.
// `head_groups`: each rank's heads in that many groups (dividing H), each group a call of
// its own, so that a group's exchange runs beside the next group's first passes and the
// one before's walk (below).
struct placement {
  int world = 1, first_rank = 0, head_groups = 1;
  std::vector<int> devices;
  const cuda_plugin::nccl::process_ranks* process = nullptr;
};
// One process: each of `devices` takes `per_device` consecutive ranks.
placement one_process(const std::vector<int>& devices, int per_device, int head_groups);

// Untimed: the ranks' buffers and their tokens (and h0, dht, do) copied from the call's
// tensors (`whole`: the whole problem's sizes and device-0 pointers; its workspace and
// stream unused).
status prepare(const call& whole, bool backward, const placement& where);
// A call on the prepared ranks, ordered after `whole.stream`'s work (device 0), which then
// waits for every rank. The outputs stay on the ranks until collect().
status forward(const call& whole);
status backward(const call& whole);
// Untimed: the outputs of the calls since the last collect into the caller's tensors.
status collect();
// Per rank of this process, the last call's phases in ms (contribution, exchange, carried
// walk, each summed over the groups; exposed: the time its stream waited for an exchange)
// and the exchange hidden (1 − exposed ÷ exchange), as a JSON object into `text`; empty
// when none ran or the call was captured. A failed read of its events is the status.
status last_call_json(std::string* text);
void release();

}  // namespace glabench::chunked::sequence
