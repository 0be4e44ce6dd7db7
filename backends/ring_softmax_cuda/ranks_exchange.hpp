// Transfers between the multi-GPU ring's ranks: every rank's messages of one exchange
// (sends and receives) on its link stream, by the copy engines (one process) or NCCL
// (one process per rank), and the exchange the schedule makes at every step: the
// key/value shards passed around the ring. Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "launch.hpp"

namespace glabench::ring::ranks {

struct rank_state;
struct world_state;

// One rank's side of a transfer: `bytes` from `data` to `peer`, or from `peer` into it.
struct message {
  bool send;
  char* data;
  size_t bytes;
  int peer;
};
inline message send_to(const char* data, size_t bytes, int peer) {
  return {true, const_cast<char*>(data), bytes, peer};
}
inline message recv_from(char* data, size_t bytes, int peer) {
  return {false, data, bytes, peer};
}

// A rank's messages of one exchange, listed into `out`.
using message_list = std::function<status(rank_state& r, std::vector<message>* out)>;

// Every rank's link stream: wait for `after[r]` (null: nothing), then every rank's
// messages (`ops(rank, &messages)` lists them); returns each rank's event at the end of
// its transfers, sent and received.
// - One process: copy engines (cudaMemcpyPeerAsync), so the transfers take no SMs from
//   the blocks they overlap. Each copy runs on the receiver's link stream once both
//   sides have waited for `after`; each sender's link stream then waits for the copies
//   that read its buffers.
// - One process per rank: one NCCL group.
status exchange(world_state& w, int m, const std::vector<cudaEvent_t>& after,
                const message_list& ops, std::vector<cudaEvent_t>* done);

// The key/value rows rank r works on at step s: its own, then the ring buffers.
struct held_keys {
  const char *k, *v;
};
held_keys keys_at(const rank_state& r, int s);

// The key/value shards for step `next` around the ring: each rank sends the shard it
// holds at step `now` on (to r+1 forward, r−1 backward) and receives the one for `next`
// into ring buffer next mod 2, once `after` (the compute that last read it) is done.
status pass_keys(world_state& w, int m, int now, int next, bool forward,
                 const std::vector<cudaEvent_t>& after, std::vector<cudaEvent_t>* ready);

}  // namespace glabench::ring::ranks
