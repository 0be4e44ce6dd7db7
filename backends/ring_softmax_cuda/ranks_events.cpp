// The events of the multi-GPU ring's calls (ranks_events.hpp): the pool, and the spans
// a call records on each rank's streams.
#include "ranks_events.hpp"

#include "ranks_world.hpp"

namespace glabench::ring::ranks {

status event_pool::take(cudaEvent_t* e) {
  if (next == events.size()) {
    cudaEvent_t made = nullptr;
    GLABENCH_TRY_CUDA(cudaEventCreate(&made), "cudaEventCreate");
    events.push_back(made);
  }
  *e = events[next++];
  return {};
}

status timed_wait(rank_state& r, int m, cudaEvent_t e) {
  cudaEvent_t before, after;
  GLABENCH_TRY(r.pool[m].take(&before));
  GLABENCH_TRY(r.pool[m].take(&after));
  GLABENCH_TRY_CUDA(cudaEventRecord(before, r.compute), "cudaEventRecord");
  GLABENCH_TRY_CUDA(cudaStreamWaitEvent(r.compute, e, 0), "cudaStreamWaitEvent");
  GLABENCH_TRY_CUDA(cudaEventRecord(after, r.compute), "cudaEventRecord");
  r.clock[m].stalls.push_back({before, after});
  return {};
}

status open_span(rank_state& r, int m, cudaEvent_t* begin) {
  GLABENCH_TRY(r.pool[m].take(begin));
  GLABENCH_TRY_CUDA(cudaEventRecord(*begin, r.compute), "cudaEventRecord");
  return {};
}
status close_span(rank_state& r, int m, cudaEvent_t begin, cudaEvent_t* end) {
  GLABENCH_TRY(r.pool[m].take(end));
  GLABENCH_TRY_CUDA(cudaEventRecord(*end, r.compute), "cudaEventRecord");
  r.clock[m].computes.push_back({begin, *end});
  return {};
}

status begin_step(rank_state& r, int m, cudaEvent_t keys_ready, cudaEvent_t* begin) {
  GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
  if (keys_ready) GLABENCH_TRY(timed_wait(r, m, keys_ready));
  return open_span(r, m, begin);
}

status begin_call(world_state& w, int m, cudaStream_t caller) {
  GLABENCH_TRY_CUDA(cudaEventRecord(w.common_start, caller), "cudaEventRecord");
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    r.pool[m].next = 0;
    r.clock[m] = rank_clock{};
    GLABENCH_TRY(r.pool[m].take(&r.clock[m].start));
    GLABENCH_TRY(r.pool[m].take(&r.clock[m].end));
    GLABENCH_TRY_CUDA(cudaStreamWaitEvent(r.compute, w.common_start, 0), "cudaStreamWaitEvent");
    GLABENCH_TRY_CUDA(cudaStreamWaitEvent(r.link, w.common_start, 0), "cudaStreamWaitEvent");
    GLABENCH_TRY_CUDA(cudaEventRecord(r.clock[m].start, r.compute), "cudaEventRecord");
  }
  return {};
}

status end_call(world_state& w, int m, const std::vector<cudaEvent_t>& last_transfer,
                cudaStream_t caller) {
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    rank_state& r = w.ranks[i];
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    if (!last_transfer.empty()) GLABENCH_TRY(timed_wait(r, m, last_transfer[i]));
    GLABENCH_TRY_CUDA(cudaEventRecord(r.clock[m].end, r.compute), "cudaEventRecord");
  }
  for (rank_state& r : w.ranks)
    GLABENCH_TRY_CUDA(cudaStreamWaitEvent(caller, r.clock[m].end, 0), "cudaStreamWaitEvent");
  w.called[m] = true;
  return {};
}

}  // namespace glabench::ring::ranks
