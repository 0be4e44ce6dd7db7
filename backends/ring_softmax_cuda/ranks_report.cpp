// report_json() of the multi-GPU ring (ring_ranks.hpp): the last forward and backward
// as the events of ranks_events recorded them — per-rank time, compute, communication,
// and how much of the communication compute hid.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "ranks_world.hpp"
#include "ring_ranks.hpp"

namespace glabench::ring::ranks {
namespace {

status elapsed(cudaEvent_t a, cudaEvent_t b, float* ms) {
  GLABENCH_TRY_CUDA(cudaEventElapsedTime(ms, a, b), "cudaEventElapsedTime");
  return {};
}
status total(const std::vector<std::pair<cudaEvent_t, cudaEvent_t>>& spans, float* sum) {
  *sum = 0;
  for (const auto& [a, b] : spans) {
    float ms = 0;
    GLABENCH_TRY(elapsed(a, b, &ms));
    *sum += ms;
  }
  return {};
}
std::string list(const std::vector<float>& xs) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < xs.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.4f", i ? "," : "", xs[i]);
    s += buf;
  }
  return s + "]";
}
status call_report(world_state& w, int m, std::string* text) {
  std::vector<float> rank_ms, compute_ms, comm_ms, exposed_ms;
  std::vector<int> ids;
  float comm = 0, exposed = 0;
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(cudaEventSynchronize(r.clock[m].end), "cudaEventSynchronize");
    ids.push_back(r.rank);
    float ms[4];
    GLABENCH_TRY(elapsed(r.clock[m].start, r.clock[m].end, &ms[0]));
    GLABENCH_TRY(total(r.clock[m].computes, &ms[1]));
    GLABENCH_TRY(total(r.clock[m].transfers, &ms[2]));
    GLABENCH_TRY(total(r.clock[m].stalls, &ms[3]));
    rank_ms.push_back(ms[0]);
    compute_ms.push_back(ms[1]);
    comm_ms.push_back(ms[2]);
    exposed_ms.push_back(ms[3]);
    comm += comm_ms.back();
    exposed += exposed_ms.back();
  }
  const float hidden = comm > 0 ? std::clamp(1.f - exposed / comm, 0.f, 1.f) : 1.f;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", hidden);
  std::string ranks = "[";
  for (size_t i = 0; i < ids.size(); ++i) ranks += (i ? "," : "") + std::to_string(ids[i]);
  *text = "{\"ranks\":" + ranks + "],\"rank_ms\":" + list(rank_ms) +
          ",\"compute_ms\":" + list(compute_ms) + ",\"comm_ms\":" + list(comm_ms) +
          ",\"exposed_comm_ms\":" + list(exposed_ms) + ",\"comm_hidden_fraction\":" + buf + "}";
  return {};
}

}  // namespace

status report_json(std::string* text) {
  std::lock_guard<std::mutex> guard(state_lock);
  cuda_plugin::device_guard keep;
  text->clear();
  if (!state || !(state->called[0] || state->called[1])) return {};
  world_state& w = *state;
  std::string s =
      "{\"world\":" + std::to_string(w.where.world) + ",\"layout\":\"" + layout_name(w.p.chunking) +
      "\",\"block\":\"" + (w.p.block == block_kernel::cudnn ? "cudnn" : "own") +
      "\",\"processes\":\"" + (w.one_process ? "one" : "one per rank") + "\"" +
      (w.one_process ? "" : ",\"nccl_version\":" + std::to_string(nccl::library_version())) +
      ",\"outputs\":\"each rank's own rows at the call's end; collect() gathers them, untimed\"";
  if (w.collect_ms >= 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ",\"collect_ms\":%.4f", w.collect_ms);
    s += buf;
  }
  for (int m = 0; m < 2; ++m) {
    if (!w.called[m]) continue;
    std::string call;
    GLABENCH_TRY(call_report(w, m, &call));
    s += (m == 0 ? ",\"forward\":" : ",\"backward\":") + call;
  }
  *text = s + "}";
  return {};
}

}  // namespace glabench::ring::ranks
