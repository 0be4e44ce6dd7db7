// Transfers between the multi-GPU ring's ranks (ranks_exchange.hpp).
#include "ranks_exchange.hpp"

#include "ranks_world.hpp"

namespace glabench::ring::ranks {

status exchange(world_state& w, int m, const std::vector<cudaEvent_t>& after,
                const message_list& ops, std::vector<cudaEvent_t>* done) {
  const size_t n = w.ranks.size();
  done->assign(n, nullptr);
  std::vector<cudaEvent_t> begin(n);
  std::vector<std::vector<message>> msgs(n);
  for (size_t i = 0; i < n; ++i) {
    rank_state& r = w.ranks[i];
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    if (!after.empty() && after[i])
      GLABENCH_TRY_CUDA(cudaStreamWaitEvent(r.link, after[i], 0), "cudaStreamWaitEvent");
    GLABENCH_TRY(r.pool[m].take(&begin[i]));
    GLABENCH_TRY(r.pool[m].take(&(*done)[i]));
    GLABENCH_TRY_CUDA(cudaEventRecord(begin[i], r.link), "cudaEventRecord");
    GLABENCH_TRY(ops(r, &msgs[i]));
  }
  if (w.one_process) {
    // Rank r is w.ranks[r] here. The k-th send of a to b pairs with b's k-th receive from a.
    std::vector<cudaEvent_t> copied(n);
    for (size_t b = 0; b < n; ++b) {
      rank_state& to = w.ranks[b];
      GLABENCH_TRY_CUDA(cudaSetDevice(to.device), "cudaSetDevice");
      std::vector<size_t> taken(n, 0);
      for (const message& in : msgs[b]) {
        if (in.send) continue;
        const size_t a = size_t(in.peer);
        std::vector<message>& out = msgs[a];
        size_t k = taken[a], seen = 0;
        const message* match = nullptr;
        for (const message& x : out)
          if (x.send && x.peer == to.rank && seen++ == k) {
            match = &x;
            break;
          }
        if (!match || match->bytes != in.bytes)
          return "ring exchange: a receive has no matching send";
        ++taken[a];
        GLABENCH_TRY_CUDA(cudaStreamWaitEvent(to.link, begin[a], 0), "cudaStreamWaitEvent");
        if (in.bytes)
          GLABENCH_TRY_CUDA(cudaMemcpyPeerAsync(in.data, to.device, match->data, w.ranks[a].device,
                                                in.bytes, to.link),
                            "cudaMemcpyPeerAsync");
      }
      GLABENCH_TRY(to.pool[m].take(&copied[b]));
      GLABENCH_TRY_CUDA(cudaEventRecord(copied[b], to.link), "cudaEventRecord");
    }
    for (size_t a = 0; a < n; ++a) {
      rank_state& from = w.ranks[a];
      GLABENCH_TRY_CUDA(cudaSetDevice(from.device), "cudaSetDevice");
      for (const message& x : msgs[a])
        if (x.send)
          GLABENCH_TRY_CUDA(cudaStreamWaitEvent(from.link, copied[size_t(x.peer)], 0),
                            "cudaStreamWaitEvent");
    }
  } else {
    GLABENCH_TRY(nccl::group_start());
    status failed;
    for (size_t i = 0; i < n && failed.empty(); ++i)
      for (const message& x : msgs[i]) {
        if (!x.bytes) continue;
        rank_state& r = w.ranks[i];
        failed = x.send ? nccl::send(x.data, x.bytes, x.peer, r.comm, r.link)
                        : nccl::recv(x.data, x.bytes, x.peer, r.comm, r.link);
        if (!failed.empty()) break;
      }
    GLABENCH_TRY(nccl::group_end());
    if (!failed.empty()) return failed;
  }
  for (size_t i = 0; i < n; ++i) {
    rank_state& r = w.ranks[i];
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(cudaEventRecord((*done)[i], r.link), "cudaEventRecord");
    r.clock[m].transfers.push_back({begin[i], (*done)[i]});
  }
  return {};
}

held_keys keys_at(const rank_state& r, int s) {
  return s == 0 ? held_keys{r.k, r.v} : held_keys{r.ring_k[s % 2], r.ring_v[s % 2]};
}

status pass_keys(world_state& w, int m, int now, int next, bool forward,
                 const std::vector<cudaEvent_t>& after, std::vector<cudaEvent_t>* ready) {
  const problem& lp = w.local;
  const int W = w.where.world;
  const size_t e = storage_bytes(lp.dtype);
  return exchange(
      w, m, after,
      [&](rank_state& r, std::vector<message>* out) -> status {
        const held_keys held = keys_at(r, now);
        const int up = (r.rank + 1) % W, down = (r.rank + W - 1) % W;
        const int to = forward ? up : down, from = forward ? down : up;
        *out = {send_to(held.k, buffer_bytes(lp, lp.D, e), to),
                send_to(held.v, buffer_bytes(lp, lp.V, e), to),
                recv_from(r.ring_k[next % 2], buffer_bytes(lp, lp.D, e), from),
                recv_from(r.ring_v[next % 2], buffer_bytes(lp, lp.V, e), from)};
        return {};
      },
      ready);
}

}  // namespace glabench::ring::ranks
