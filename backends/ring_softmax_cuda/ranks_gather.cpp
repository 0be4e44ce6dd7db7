// collect() of the multi-GPU ring (ring_ranks.hpp): once a call has ended with each
// rank's outputs on its device, its rows go to the caller's tensors (untimed): to the
// rank on the caller's device (one process) or to every rank (one process per rank).
#include <chrono>
#include <mutex>
#include <vector>

#include "ranks_world.hpp"
#include "ring_ranks.hpp"

namespace glabench::ring::ranks {
namespace {

// One output tensor: the rank's buffer, the caller's, its row width (0: lse) and element.
struct output_tensor {
  char* rank_state::*member;
  void* caller;
  int X;
  size_t elem;
};

// Every rank's rows of `outs` into the caller's tensors. One process: each rank copies its
// own rows to the caller's device (the first), peer to peer, so several ranks may share a
// device. One process per rank: to every rank, NCCL carrying the other ranks' rows and a
// rank's own rows a local copy.
status gather(world_state& w, const std::vector<output_tensor>& outs) {
  const problem& p = w.p;
  const int W = w.where.world;
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(cudaStreamSynchronize(r.compute), "cudaStreamSynchronize (before collect)");
    GLABENCH_TRY_CUDA(cudaStreamSynchronize(r.link), "cudaStreamSynchronize (before collect)");
  }
  if (w.one_process) {
    const int caller = w.where.devices[0];
    for (rank_state& r : w.ranks) {
      GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      const std::vector<span>& seq = w.chunks[size_t(r.rank)];
      for (const output_tensor& t : outs)
        GLABENCH_TRY(copy_ranges(row_ranges(p, p.T, t.X, t.elem, seq), static_cast<char*>(t.caller),
                                 caller, row_ranges(p, w.local.T, t.X, t.elem, local_spans(seq)),
                                 r.*t.member, r.device, r.link));
    }
    for (rank_state& r : w.ranks) {
      GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      GLABENCH_TRY_CUDA(cudaStreamSynchronize(r.link), "cudaStreamSynchronize (collect)");
    }
    return {};
  }
  GLABENCH_TRY(nccl::group_start());
  status failed;
  for (rank_state& r : w.ranks) {
    if (!failed.empty()) break;
    failed = [&]() -> status {
      GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      for (int peer = 0; peer < W; ++peer) {
        if (peer == r.rank) continue;
        for (const output_tensor& t : outs) {
          for (const byte_range& x :
               row_ranges(p, w.local.T, t.X, t.elem, local_spans(w.chunks[size_t(r.rank)])))
            if (x.bytes)
              GLABENCH_TRY(nccl::send(r.*t.member + x.offset, x.bytes, peer, r.comm, r.link));
          for (const byte_range& x : row_ranges(p, p.T, t.X, t.elem, w.chunks[size_t(peer)]))
            if (x.bytes)
              GLABENCH_TRY(nccl::recv(static_cast<char*>(t.caller) + x.offset, x.bytes, peer,
                                      r.comm, r.link));
        }
      }
      return {};
    }();
  }
  GLABENCH_TRY(nccl::group_end());
  if (!failed.empty()) return failed;
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    const std::vector<span>& seq = w.chunks[size_t(r.rank)];
    for (const output_tensor& t : outs)
      GLABENCH_TRY(copy_ranges(row_ranges(p, p.T, t.X, t.elem, seq), static_cast<char*>(t.caller),
                               r.device, row_ranges(p, w.local.T, t.X, t.elem, local_spans(seq)),
                               r.*t.member, r.device, r.link));
    GLABENCH_TRY_CUDA(cudaStreamSynchronize(r.link), "cudaStreamSynchronize (collect)");
  }
  return {};
}

status collect_pending(world_state& w) {
  const problem& p = w.p;
  const size_t e = storage_bytes(p.dtype), a = acc_bytes(p.dtype);
  std::vector<output_tensor> outs;
  const pending_outputs& x = w.pending;
  if (x.o)
    outs.push_back({&rank_state::o, x.o, p.V, e}), outs.push_back({&rank_state::lse, x.lse, 0, a});
  if (x.dq)
    outs.push_back({&rank_state::dq, x.dq, p.D, e}),
        outs.push_back({&rank_state::dk, x.dk, p.D, e}),
        outs.push_back({&rank_state::dv, x.dv, p.V, e});
  if (outs.empty()) return {};
  const auto t0 = std::chrono::steady_clock::now();
  GLABENCH_TRY(gather(w, outs));
  w.collect_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  w.pending = {};
  return {};
}

}  // namespace

status collect() {
  std::lock_guard<std::mutex> guard(state_lock);
  cuda_plugin::device_guard keep;
  if (!state) return {};
  return collect_pending(*state);
}

}  // namespace glabench::ring::ranks
