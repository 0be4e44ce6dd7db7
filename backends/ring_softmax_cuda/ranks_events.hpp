// The events of the multi-GPU ring's calls: each rank's clock (every pair of events is
// (before, after) on one stream) and its pool of events, made once and reused call after
// call; the spans a call records with them — a call's start and end on every rank, each
// step's compute, each wait of the compute stream (a stall) — from which ranks_report
// makes the report: per-rank time, compute, communication, and the communication compute
// did not hide. Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "launch.hpp"

namespace glabench::ring::ranks {

struct rank_state;
struct world_state;

// Timing of one call on one rank; every pair of events is (before, after) on one stream.
struct rank_clock {
  cudaEvent_t start = nullptr, end = nullptr;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> stalls;     // compute stream waiting
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> computes;   // a step's compute
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> transfers;  // link stream sending/receiving
};

// Events made once and reused call after call; `take` hands out the next.
struct event_pool {
  std::vector<cudaEvent_t> events;
  size_t next = 0;
  status take(cudaEvent_t* e);
};

// `m` below is the call: 0 forward, 1 backward (rank_state's pool and clock).

// The compute stream waits for `e`, with the wait itself timed as a stall.
status timed_wait(rank_state& r, int m, cudaEvent_t e);

// A timed span of the compute stream: opened (an event recorded) and closed (another,
// the pair kept for the report); `end` is the span's last event.
status open_span(rank_state& r, int m, cudaEvent_t* begin);
status close_span(rank_state& r, int m, cudaEvent_t begin, cudaEvent_t* end);

// A step begins on rank r: its device current, its keys waited for (null: they are
// here), a span opened.
status begin_step(rank_state& r, int m, cudaEvent_t keys_ready, cudaEvent_t* begin);

// The start of a call: every rank's streams wait for what the caller's stream enqueued.
status begin_call(world_state& w, int m, cudaStream_t caller);

// The end: each compute stream waits for its last transfer (none: empty), the caller's
// stream for every rank.
status end_call(world_state& w, int m, const std::vector<cudaEvent_t>& last_transfer,
                cudaStream_t caller);

}  // namespace glabench::ring::ranks
