// The multi-GPU ring's ranks and world (ranks_world.hpp): the rows of a tensor as byte
// ranges, a rank's buffers carved from one arena, a world built for a problem and
// placement and freed; prepare() and release().
#include "ranks_world.hpp"

#include <cuda_runtime.h>  // (cudaMalloc of a char**)

#include <algorithm>
#include <tuple>

#include "../common/workspace_carver.hpp"

namespace glabench::ring::ranks {

std::mutex state_lock;
std::optional<world_state> state;

std::vector<byte_range> row_ranges(const problem& p, int64_t R, int X, size_t elem,
                                   const std::vector<span>& rows) {
  std::vector<byte_range> out;
  for (const span& c : rows) {
    if (X == 0) {
      for (int bh = 0; bh < p.B * p.H; ++bh)
        out.push_back({size_t(int64_t(bh) * R + c.begin) * elem, size_t(c.size()) * elem});
    } else {
      for (int b = 0; b < p.B; ++b)
        out.push_back({size_t((int64_t(b) * R + c.begin) * p.H * X) * elem,
                       size_t(c.size() * p.H * X) * elem});
    }
  }
  return out;
}

std::vector<span> local_spans(const std::vector<span>& chunks) {
  std::vector<span> out;
  for (size_t i = 0; i < chunks.size(); ++i) out.push_back(local_rows(chunks, i));
  return out;
}

status copy_ranges(const std::vector<byte_range>& to, char* dst, int dst_device,
                   const std::vector<byte_range>& from, const char* src, int src_device,
                   cudaStream_t stream) {
  for (size_t i = 0; i < to.size(); ++i)
    GLABENCH_TRY_CUDA(cudaMemcpyPeerAsync(dst + to[i].offset, dst_device, src + from[i].offset,
                                          src_device, to[i].bytes, stream),
                      "cudaMemcpyPeerAsync");
  return {};
}

problem local_problem(const problem& p, const std::vector<std::vector<span>>& chunks) {
  problem lp = p;
  lp.T = std::max<int64_t>(1, longest_shard(chunks));
  return lp;
}

std::vector<std::vector<std::optional<step_block>>> steps_of(
    const std::vector<std::vector<span>>& chunks, bool causal) {
  const int W = int(chunks.size());
  std::vector<std::vector<std::optional<step_block>>> out(static_cast<size_t>(W));
  for (int r = 0; r < W; ++r)
    for (int s = 0; s < W; ++s) out[size_t(r)].push_back(rank_step(chunks, r, s, causal));
  return out;
}

namespace {

void free_rank(rank_state& r) {
  cudaSetDevice(r.device);
  if (r.arena) cudaFree(r.arena);
  for (event_pool& pool : r.pool)
    for (cudaEvent_t e : pool.events) cudaEventDestroy(e);
  if (r.compute) cudaStreamDestroy(r.compute);
  if (r.link) cudaStreamDestroy(r.link);
  r = rank_state{};
}

void free_world() {
  if (!state) return;
  cuda_plugin::device_guard keep;
  for (rank_state& r : state->ranks) free_rank(r);
  if (state->common_start) {
    cudaSetDevice(state->common_start_device);
    cudaEventDestroy(state->common_start);
  }
  state.reset();
}

// The rank's buffers, carved in order from one arena (base null: only counts). `lp` is
// the local problem (T = rows per batch of every rank's buffers).
size_t carve(const problem& lp, bool backward, size_t cudnn_bytes, rank_state& r, char* base) {
  cuda_plugin::carver c{base};
  const size_t e = storage_bytes(lp.dtype), a = acc_bytes(lp.dtype);
  const size_t tokens = size_t(lp.B) * lp.T * lp.H, stats = size_t(lp.B) * lp.H * lp.T;
  auto take = [&](size_t bytes) { return c.take<char>(bytes); };
  const bool cudnn = lp.block == block_kernel::cudnn;
  r.q = take(tokens * lp.D * e), r.k = take(tokens * lp.D * e), r.v = take(tokens * lp.V * e);
  r.o = take(tokens * lp.V * e), r.lse = take(stats * a);
  for (int i = 0; i < 2; ++i)
    r.ring_k[i] = take(tokens * lp.D * e), r.ring_v[i] = take(tokens * lp.V * e);
  r.acc_o = take(tokens * lp.V * a);
  if (cudnn) r.block_o = take(tokens * lp.V * e), r.block_stats = take(stats * 4);
  if (backward) {
    r.d_o = take(tokens * lp.V * e), r.dq = take(tokens * lp.D * e);
    r.dk = take(tokens * lp.D * e), r.dv = take(tokens * lp.V * e);
    r.acc_dq = take(tokens * lp.D * a);
    for (int i = 0; i < 2; ++i)
      r.acc_dk[i] = take(tokens * lp.D * a), r.acc_dv[i] = take(tokens * lp.V * a);
    if (cudnn) {
      for (int i = 0; i < 2; ++i)
        r.block_dq[i] = take(tokens * lp.D * e), r.block_dk[i] = take(tokens * lp.D * e),
        r.block_dv[i] = take(tokens * lp.V * e);
      r.recv_dk = take(tokens * lp.D * e), r.recv_dv = take(tokens * lp.V * e);
      r.packed_lse = take(stats * 4);
    } else {
      r.row_dots = take(stats * a);
    }
  }
  r.cudnn_workspace = take(cudnn_bytes);
  return c.used;
}

// A fresh world for the problem: every rank's streams, cuDNN graphs and buffers.
status build_world(const problem& p, const placement& where, bool backward, bool one_process,
                   const std::vector<nccl::comm>& comms) {
  state.emplace();
  world_state& w = *state;
  w.p = p;
  w.where = where;
  w.backward = backward;
  w.one_process = one_process;
  w.chunks = shard_chunks(p.T, where.world, p.chunking);
  w.local = local_problem(p, w.chunks);
  w.steps = steps_of(w.chunks, p.causal);
  GLABENCH_TRY_CUDA(cudaSetDevice(where.devices[0]), "cudaSetDevice");
  GLABENCH_TRY_CUDA(cudaEventCreateWithFlags(&w.common_start, cudaEventDisableTiming),
                    "cudaEventCreate");
  w.common_start_device = where.devices[0];
  // One process: the ranks' copies go device to device over NVLink where it exists.
  if (one_process)
    for (int from : where.devices)
      for (int to : where.devices) {
        int can = 0;
        if (from == to || cudaDeviceCanAccessPeer(&can, to, from) != cudaSuccess || !can) continue;
        GLABENCH_TRY_CUDA(cudaSetDevice(to), "cudaSetDevice");
        const cudaError_t e = cudaDeviceEnablePeerAccess(from, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();  // enabled before (this process's earlier world): fine
        else
          GLABENCH_TRY_CUDA(e, "cudaDeviceEnablePeerAccess");
      }
  w.ranks.resize(where.devices.size());
  for (size_t i = 0; i < where.devices.size(); ++i) {
    rank_state& r = w.ranks[i];
    r.rank = where.first_rank + int(i);
    r.device = where.devices[i];
    r.comm = comms[i];
    r.rows = shard_rows(w.chunks[size_t(r.rank)]);
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(cudaStreamCreateWithFlags(&r.compute, cudaStreamNonBlocking),
                      "cudaStreamCreate");
    GLABENCH_TRY_CUDA(cudaStreamCreateWithFlags(&r.link, cudaStreamNonBlocking),
                      "cudaStreamCreate");
    int64_t cudnn_fwd = 0, cudnn_bwd = 0;
    if (p.block == block_kernel::cudnn) {  // graphs per device, planned now (untimed)
      GLABENCH_TRY(plan_cudnn_steps(p, false, &cudnn_fwd));
      if (backward) GLABENCH_TRY(plan_cudnn_steps(p, true, &cudnn_bwd));
    }
    const size_t cudnn_bytes = size_t(std::max(cudnn_fwd, cudnn_bwd));
    r.arena_bytes = carve(w.local, backward, cudnn_bytes, r, nullptr);
    GLABENCH_TRY_CUDA(cudaMalloc(&r.arena, r.arena_bytes), "cudaMalloc (the rank's buffers)");
    // Padding rows travel with whole buffers: zeros, never read.
    GLABENCH_TRY_CUDA(cudaMemset(r.arena, 0, r.arena_bytes), "cudaMemset (the rank's buffers)");
    carve(w.local, backward, cudnn_bytes, r, r.arena);
  }
  return {};
}

}  // namespace

status prepare(const problem& p, const placement& where, const forward_io& fwd,
               const backward_io* bwd) {
  std::lock_guard<std::mutex> guard(state_lock);
  cuda_plugin::device_guard keep;
  if (where.world < 2 || where.devices.empty()) return "the multi-GPU ring needs at least 2 ranks";
  if (p.shards != where.world) return "the ring's shards must equal its ranks";
  // One process moves everything with the copy engines, NCCL only one process per rank.
  const bool one_process = int(where.devices.size()) == where.world;
  std::vector<nccl::comm> comms(where.devices.size(), nullptr);
  if (!one_process)
    GLABENCH_TRY(nccl::process_communicator(process_ranks(), where.devices[0], &comms[0]));
  const bool backward = bwd != nullptr;
  // Same problem and placement: keep the buffers, copy the inputs again.
  const bool same =
      state && state->where.devices == where.devices && state->where.world == where.world &&
      state->where.first_rank == where.first_rank && state->backward == backward &&
      std::tie(state->p.dtype, state->p.B, state->p.H, state->p.D, state->p.V, state->p.T,
               state->p.causal, state->p.scale, state->p.chunking, state->p.block) ==
          std::tie(p.dtype, p.B, p.H, p.D, p.V, p.T, p.causal, p.scale, p.chunking, p.block);
  if (!same) {
    free_world();
    if (status e = build_world(p, where, backward, one_process, comms); !e.empty()) {
      free_world();  // nothing half-built stays
      return e;
    }
  }
  world_state& w = *state;
  w.io_q = fwd.q, w.io_k = fwd.k, w.io_v = fwd.v, w.io_do = bwd ? bwd->d_o : nullptr;
  w.forward_ran = false;
  w.next_keys_held = false;
  w.pending = {};
  const size_t e = storage_bytes(p.dtype);
  const int from = where.devices[0];
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    const std::vector<span>&seq = w.chunks[size_t(r.rank)], loc = local_spans(seq);
    auto rows_of = [&](const void* src, char* dst, int X) {
      return copy_ranges(row_ranges(p, w.local.T, X, e, loc), dst, r.device,
                         row_ranges(p, p.T, X, e, seq), static_cast<const char*>(src), from,
                         r.compute);
    };
    GLABENCH_TRY(rows_of(fwd.q, r.q, p.D));
    GLABENCH_TRY(rows_of(fwd.k, r.k, p.D));
    GLABENCH_TRY(rows_of(fwd.v, r.v, p.V));
    if (bwd) GLABENCH_TRY(rows_of(bwd->d_o, r.d_o, p.V));
    GLABENCH_TRY_CUDA(cudaStreamSynchronize(r.compute), "cudaStreamSynchronize (prepare's copies)");
  }
  return {};
}

void release() {
  std::lock_guard<std::mutex> guard(state_lock);
  free_world();
}

}  // namespace glabench::ring::ranks
