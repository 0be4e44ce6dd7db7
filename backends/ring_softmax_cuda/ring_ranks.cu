// The multi-GPU ring (ring_ranks.hpp). Every rank keeps tensors at the sequence's own
// positions ([B,T,H,X], lse [B,H,T]) but fills only the rows of the chunks it holds or
// is passed, so each pair runs through pair_steps.cuh exactly as on one device.
//
// A call, per rank r of W, at step s = 0 … W−1 (kv_source(r, s) is whose keys r has):
//   link stream:    send the key/value rows held now to r+1, receive step s+1's from
//                   r−1 into ring buffer (s+1) mod 2 (after step s−1's compute freed it);
//   compute stream: wait for step s's keys, run the step's pairs, fold into the
//                   query rows' accumulators (forward: o, lse; backward: dq);
//   backward also:  the step's dk/dv partials into a step accumulator, joined with the
//                   accumulator r−1 passed (the keys' earlier steps), sent on to r+1;
//                   after step W−1 the accumulator is complete where it is, on the rank
//                   before the keys' home, which writes that chunk's dk/dv.
// Last, every rank sends its rows of the outputs to the rank holding the caller's
// tensors (one process) or to every rank (one process per rank): o, lse and dq of its
// own chunks, dk and dv of the chunks it held last.
// Events around every wait of the compute stream and every transfer give the report:
// per-rank time, compute, communication, and the communication compute did not hide.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>

#include "nccl_link.hpp"
#include "pair_steps.hpp"
#include "ring_ranks.hpp"
#include "workspace_carver.hpp"

namespace glabench::ring::ranks {
namespace {

#define RING_TRY(expr)                             \
  do {                                             \
    if (status s_ = (expr); !s_.empty()) return s_; \
  } while (0)
#define RING_CUDA(expr, what)                                          \
  do {                                                                 \
    if (cudaError_t e_ = (expr)) return cuda_error(e_, what);          \
  } while (0)

// Leaves the calling thread's current device as it found it.
struct device_guard {
  int previous = 0;
  device_guard() { cudaGetDevice(&previous); }
  ~device_guard() { cudaSetDevice(previous); }
};

size_t storage_bytes(storage s) { return s == storage::fp64 ? 8 : s == storage::fp32 ? 4 : 2; }
size_t acc_bytes(storage s) { return s == storage::fp64 ? 8 : 4; }

// A tensor's rows of some chunks as contiguous byte ranges: [B,T,H,X] has one per batch
// and chunk, lse [B,H,T] one per batch, head and chunk.
struct byte_range {
  size_t offset, bytes;
};
std::vector<byte_range> token_ranges(const problem& p, int X, size_t elem, const std::vector<span>& chunks) {
  std::vector<byte_range> out;
  for (const span& c : chunks)
    for (int b = 0; b < p.B; ++b)
      out.push_back({size_t((int64_t(b) * p.T + c.begin) * p.H * X) * elem, size_t(c.size() * p.H * X) * elem});
  return out;
}
std::vector<byte_range> stats_ranges(const problem& p, size_t elem, const std::vector<span>& chunks) {
  std::vector<byte_range> out;
  for (const span& c : chunks)
    for (int bh = 0; bh < p.B * p.H; ++bh)
      out.push_back({size_t(int64_t(bh) * p.T + c.begin) * elem, size_t(c.size()) * elem});
  return out;
}

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
  status take(cudaEvent_t* e) {
    if (next == events.size()) {
      cudaEvent_t made = nullptr;
      RING_CUDA(cudaEventCreate(&made), "cudaEventCreate");
      events.push_back(made);
    }
    *e = events[next++];
    return {};
  }
};

struct rank_state {
  int rank = 0, device = 0;
  nccl::comm comm = nullptr;
  cudaStream_t compute = nullptr, link = nullptr;
  bool holds_io = false;  // the caller's tensors are this rank's (no copies of its own)
  char* arena = nullptr;
  size_t arena_bytes = 0;
  // At the sequence's positions; the caller's tensors when holds_io.
  char *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr;
  char *d_o = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
  char *ring_k[2] = {}, *ring_v[2] = {};                 // keys passed in, double-buffered
  char *acc_o = nullptr, *acc_lse = nullptr, *acc_dq = nullptr, *row_dots = nullptr;
  char *step_dk[2] = {}, *step_dv[2] = {};               // this step's dk/dv, then sent on
  char *recv_dk = nullptr, *recv_dv = nullptr;           // dk/dv passed in
  char *block_o = nullptr, *block_stats = nullptr, *block_dq = nullptr, *block_dk = nullptr;
  char *block_dv = nullptr, *packed_lse = nullptr, *cudnn_workspace = nullptr;
  event_pool pool[2];  // forward, backward
  rank_clock clock[2];
};

struct world_state {
  problem p{};
  placement where;
  bool backward = false, one_process = true;
  std::vector<rank_state> ranks;  // this process's
  std::vector<std::vector<span>> chunks;
  std::vector<block_pair> plan;
  pair_visits visits;
  const void *io_q = nullptr, *io_k = nullptr, *io_v = nullptr, *io_do = nullptr;
  bool forward_ran = false;  // since prepare: the ranks' o and lse are the forward's
  bool called[2] = {false, false};
  cudaEvent_t common_start = nullptr;
  int common_start_device = -1;
};

std::mutex state_lock;
std::optional<world_state> state;

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
  device_guard keep;
  for (rank_state& r : state->ranks) free_rank(r);
  if (state->common_start) {
    cudaSetDevice(state->common_start_device);
    cudaEventDestroy(state->common_start);
  }
  state.reset();
}

// The rank's buffers, carved in order from one arena (base null: only counts).
size_t carve(const problem& p, bool backward, bool holds_io, size_t cudnn_bytes, rank_state& r, char* base) {
  carver c{base};
  const size_t e = storage_bytes(p.dtype), a = acc_bytes(p.dtype);
  const size_t tokens = size_t(p.B) * p.T * p.H, stats = size_t(p.B) * p.H * p.T;
  auto take = [&](size_t bytes) { return c.take<char>(bytes); };
  const bool cudnn = p.block == block_kernel::cudnn;
  if (!holds_io) {
    r.q = take(tokens * p.D * e), r.k = take(tokens * p.D * e), r.v = take(tokens * p.V * e);
    r.o = take(tokens * p.V * e), r.lse = take(stats * a);
    if (backward) {
      r.d_o = take(tokens * p.V * e), r.dq = take(tokens * p.D * e);
      r.dk = take(tokens * p.D * e), r.dv = take(tokens * p.V * e);
    }
  }
  for (int i = 0; i < 2; ++i) r.ring_k[i] = take(tokens * p.D * e), r.ring_v[i] = take(tokens * p.V * e);
  r.acc_o = take(tokens * p.V * a), r.acc_lse = take(stats * a);
  if (cudnn) r.block_o = take(tokens * p.V * e), r.block_stats = take(stats * 4);
  if (backward) {
    r.acc_dq = take(tokens * p.D * a);
    for (int i = 0; i < 2; ++i) r.step_dk[i] = take(tokens * p.D * a), r.step_dv[i] = take(tokens * p.V * a);
    r.recv_dk = take(tokens * p.D * a), r.recv_dv = take(tokens * p.V * a);
    if (cudnn) {
      r.block_dq = take(tokens * p.D * e), r.block_dk = take(tokens * p.D * e), r.block_dv = take(tokens * p.V * e);
      r.packed_lse = take(stats * 4);
    } else {
      r.row_dots = take(stats * a);
    }
  }
  r.cudnn_workspace = take(cudnn_bytes);
  return c.used;
}

// One process: the rank's rows of a tensor copied from the caller's device (untimed).
status copy_rows(const std::vector<byte_range>& ranges, char* dst, int dst_device, const void* src, int src_device,
                 cudaStream_t stream) {
  for (const byte_range& x : ranges)
    RING_CUDA(cudaMemcpyPeerAsync(dst + x.offset, dst_device, static_cast<const char*>(src) + x.offset, src_device,
                                  x.bytes, stream),
              "cudaMemcpyPeerAsync");
  return {};
}

status send_ranges(const std::vector<byte_range>& ranges, const char* base, int peer, const rank_state& r) {
  for (const byte_range& x : ranges)
    if (x.bytes) RING_TRY(nccl::send(base + x.offset, x.bytes, peer, r.comm, r.link));
  return {};
}
status recv_ranges(const std::vector<byte_range>& ranges, char* base, int peer, const rank_state& r) {
  for (const byte_range& x : ranges)
    if (x.bytes) RING_TRY(nccl::recv(base + x.offset, x.bytes, peer, r.comm, r.link));
  return {};
}

// ---- one call's bookkeeping ------------------------------------------------------------

// The compute stream waits for `e`, with the wait itself timed as a stall.
status timed_wait(rank_state& r, int m, cudaEvent_t e) {
  cudaEvent_t before, after;
  RING_TRY(r.pool[m].take(&before));
  RING_TRY(r.pool[m].take(&after));
  RING_CUDA(cudaEventRecord(before, r.compute), "cudaEventRecord");
  RING_CUDA(cudaStreamWaitEvent(r.compute, e, 0), "cudaStreamWaitEvent");
  RING_CUDA(cudaEventRecord(after, r.compute), "cudaEventRecord");
  r.clock[m].stalls.push_back({before, after});
  return {};
}

// A timed span of the compute stream: opened (an event recorded) and closed (another,
// the pair kept for the report); `end` is the span's last event.
status open_span(rank_state& r, int m, cudaEvent_t* begin) {
  RING_TRY(r.pool[m].take(begin));
  RING_CUDA(cudaEventRecord(*begin, r.compute), "cudaEventRecord");
  return {};
}
status close_span(rank_state& r, int m, cudaEvent_t begin, cudaEvent_t* end) {
  RING_TRY(r.pool[m].take(end));
  RING_CUDA(cudaEventRecord(*end, r.compute), "cudaEventRecord");
  r.clock[m].computes.push_back({begin, *end});
  return {};
}

// The key/value rows rank r works on at step s: its own, then the ring buffers.
struct held_keys {
  const char *k, *v;
};
held_keys keys_at(const rank_state& r, int s) {
  return s == 0 ? held_keys{r.k, r.v} : held_keys{r.ring_k[s % 2], r.ring_v[s % 2]};
}

// Step s begins on rank r: its device current, its keys waited for, a span opened.
status begin_step(rank_state& r, int m, int s, cudaEvent_t keys_ready, cudaEvent_t* begin) {
  RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
  if (s > 0) RING_TRY(timed_wait(r, m, keys_ready));
  return open_span(r, m, begin);
}

// Every rank's link stream: wait for `after[r]` (null: nothing), then one NCCL group
// of every rank's sends and receives (`ops(rank)` enqueues them); returns each rank's
// event at the end of its transfers.
template <typename Ops>
status exchange(world_state& w, int m, const std::vector<cudaEvent_t>& after, Ops ops, std::vector<cudaEvent_t>* done) {
  done->assign(w.ranks.size(), nullptr);
  std::vector<cudaEvent_t> begin(w.ranks.size());
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    rank_state& r = w.ranks[i];
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    if (!after.empty() && after[i]) RING_CUDA(cudaStreamWaitEvent(r.link, after[i], 0), "cudaStreamWaitEvent");
    RING_TRY(r.pool[m].take(&begin[i]));
    RING_TRY(r.pool[m].take(&(*done)[i]));
    RING_CUDA(cudaEventRecord(begin[i], r.link), "cudaEventRecord");
  }
  RING_TRY(nccl::group_start());
  status failed;
  for (rank_state& r : w.ranks)
    if (failed.empty()) failed = ops(r);
  RING_TRY(nccl::group_end());
  if (!failed.empty()) return failed;
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    rank_state& r = w.ranks[i];
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    RING_CUDA(cudaEventRecord((*done)[i], r.link), "cudaEventRecord");
    r.clock[m].transfers.push_back({begin[i], (*done)[i]});
  }
  return {};
}

// The start of a call: every rank's streams wait for what the caller's stream enqueued.
status begin_call(world_state& w, int m, cudaStream_t caller) {
  RING_CUDA(cudaEventRecord(w.common_start, caller), "cudaEventRecord");
  for (rank_state& r : w.ranks) {
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    r.pool[m].next = 0;
    r.clock[m] = rank_clock{};
    RING_TRY(r.pool[m].take(&r.clock[m].start));
    RING_TRY(r.pool[m].take(&r.clock[m].end));
    RING_CUDA(cudaStreamWaitEvent(r.compute, w.common_start, 0), "cudaStreamWaitEvent");
    RING_CUDA(cudaStreamWaitEvent(r.link, w.common_start, 0), "cudaStreamWaitEvent");
    RING_CUDA(cudaEventRecord(r.clock[m].start, r.compute), "cudaEventRecord");
  }
  return {};
}

// The end: each compute stream waits for its last transfer, the caller's stream for
// every rank.
status end_call(world_state& w, int m, const std::vector<cudaEvent_t>& last_transfer, cudaStream_t caller) {
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    rank_state& r = w.ranks[i];
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    RING_TRY(timed_wait(r, m, last_transfer[i]));
    RING_CUDA(cudaEventRecord(r.clock[m].end, r.compute), "cudaEventRecord");
  }
  for (rank_state& r : w.ranks) RING_CUDA(cudaStreamWaitEvent(caller, r.clock[m].end, 0), "cudaStreamWaitEvent");
  w.called[m] = true;
  return {};
}

// Key/value rows for step s+1 around the ring (ring buffer (s+1) mod 2, free once step
// s−1's compute is done).
status pass_keys(world_state& w, int m, int s, const std::vector<cudaEvent_t>& computed_before,
                 std::vector<cudaEvent_t>* ready) {
  const problem& p = w.p;
  const int W = w.where.world;
  const size_t e = storage_bytes(p.dtype);
  return exchange(w, m, s >= 2 ? computed_before : std::vector<cudaEvent_t>{}, [&](rank_state& r) -> status {
    const int held = kv_source(r.rank, s, W), next = kv_source(r.rank, s + 1, W);
    const char* k = s == 0 ? r.k : r.ring_k[s % 2];
    const char* v = s == 0 ? r.v : r.ring_v[s % 2];
    RING_TRY(send_ranges(token_ranges(p, p.D, e, w.chunks[held]), k, (r.rank + 1) % W, r));
    RING_TRY(send_ranges(token_ranges(p, p.V, e, w.chunks[held]), v, (r.rank + 1) % W, r));
    RING_TRY(recv_ranges(token_ranges(p, p.D, e, w.chunks[next]), r.ring_k[(s + 1) % 2], (r.rank + W - 1) % W, r));
    return recv_ranges(token_ranges(p, p.V, e, w.chunks[next]), r.ring_v[(s + 1) % 2], (r.rank + W - 1) % W, r);
  }, ready);
}

// The outputs' rows to where the caller reads them: rank 0 (one process) or every rank.
struct output_tensor {
  char* rank_state::*member;
  int X;          // 0: lse [B,H,T]
  bool acc_type;  // lse in the compute type
  int held = 0;   // rows of the chunks of rank + held (dk, dv: the keys held last, 1)
};
status gather(world_state& w, int m, const std::vector<output_tensor>& outs, const std::vector<cudaEvent_t>& after,
              std::vector<cudaEvent_t>* done) {
  const problem& p = w.p;
  const int W = w.where.world;
  auto ranges = [&](const output_tensor& t, int rank) {
    const size_t elem = t.acc_type ? acc_bytes(p.dtype) : storage_bytes(p.dtype);
    const std::vector<span>& rows = w.chunks[(rank + t.held) % W];
    return t.X ? token_ranges(p, t.X, elem, rows) : stats_ranges(p, elem, rows);
  };
  return exchange(w, m, after, [&](rank_state& r) -> status {
    for (int peer = 0; peer < W; ++peer) {
      if (peer == r.rank) continue;
      const bool peer_reads = !w.one_process || peer == 0, i_read = !w.one_process || r.rank == 0;
      for (const output_tensor& t : outs) {
        if (peer_reads) RING_TRY(send_ranges(ranges(t, r.rank), r.*t.member, peer, r));
        if (i_read) RING_TRY(recv_ranges(ranges(t, peer), r.*t.member, peer, r));
      }
    }
    return {};
  }, done);
}

// The pairs rank r runs at step s, as indices into the plan.
std::vector<size_t> pairs_at(const world_state& w, int rank, int s) {
  std::vector<size_t> out;
  for (size_t i = 0; i < w.plan.size(); ++i)
    if (w.plan[i].q_shard == rank && w.plan[i].step == s) out.push_back(i);
  return out;
}

status point_at_io(world_state& w, const void* q, const void* k, const void* v, void* o, void* lse) {
  if (q != w.io_q || k != w.io_k || v != w.io_v)
    return "the inputs differ from the ones prepare() was given (multi-GPU calls need prepare first)";
  for (rank_state& r : w.ranks)
    if (r.holds_io) {
      r.q = const_cast<char*>(static_cast<const char*>(q));
      r.k = const_cast<char*>(static_cast<const char*>(k));
      r.v = const_cast<char*>(static_cast<const char*>(v));
      r.o = static_cast<char*>(o);
      r.lse = static_cast<char*>(lse);
    }
  return {};
}

template <typename T>
status forward_typed(world_state& w, const forward_io& io) {
  using A = acc_t<T>;
  const problem& p = w.p;
  const int W = w.where.world, m = 0;
  RING_TRY(point_at_io(w, io.q, io.k, io.v, io.o, io.lse));
  RING_TRY(begin_call(w, m, io.stream));
  std::vector<cudaEvent_t> computed(w.ranks.size()), keys_ready;
  for (int s = 0; s < W; ++s) {
    std::vector<cudaEvent_t> next_ready;
    if (s + 1 < W) RING_TRY(pass_keys(w, m, s, computed, &next_ready));
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      rank_state& r = w.ranks[i];
      cudaEvent_t begin;
      RING_TRY(begin_step(r, m, s, s > 0 ? keys_ready[i] : nullptr, &begin));
      const held_keys kv = keys_at(r, s);
      const forward_tensors<T> x{reinterpret_cast<const T*>(r.q),   reinterpret_cast<const T*>(kv.k),
                                 reinterpret_cast<const T*>(kv.v),  reinterpret_cast<A*>(r.acc_o),
                                 reinterpret_cast<A*>(r.acc_lse),   reinterpret_cast<T*>(r.o),
                                 reinterpret_cast<A*>(r.lse),       reinterpret_cast<T*>(r.block_o),
                                 reinterpret_cast<float*>(r.block_stats), r.cudnn_workspace};
      for (size_t at : pairs_at(w, r.rank, s))
        RING_TRY(forward_pair<T>(p, w.plan[at], w.visits.of_q[at], false, x, r.compute));
      RING_TRY(close_span(r, m, begin, &computed[i]));
    }
    keys_ready = next_ready;
  }
  std::vector<cudaEvent_t> gathered;
  RING_TRY(gather(w, m, {{&rank_state::o, p.V, false}, {&rank_state::lse, 0, true}}, computed, &gathered));
  RING_TRY(end_call(w, m, gathered, io.stream));
  w.forward_ran = true;
  return {};
}

template <typename T>
status backward_typed(world_state& w, const backward_io& io) {
  using A = acc_t<T>;
  const problem& p = w.p;
  const int W = w.where.world, m = 1;
  if (!w.backward) return "prepare() was given no backward arguments";
  RING_TRY(point_at_io(w, io.q, io.k, io.v, const_cast<void*>(io.o), const_cast<void*>(io.lse)));
  if (io.d_o != w.io_do) return "d_o differs from the one prepare() was given";
  for (rank_state& r : w.ranks)
    if (r.holds_io) {
      r.d_o = const_cast<char*>(static_cast<const char*>(io.d_o));
      r.dq = static_cast<char*>(io.dq), r.dk = static_cast<char*>(io.dk), r.dv = static_cast<char*>(io.dv);
    }
  RING_TRY(begin_call(w, m, io.stream));
  const size_t e = storage_bytes(p.dtype), a = acc_bytes(p.dtype);
  if (!w.forward_ran) {  // the ranks' o and lse are not the forward's: take the caller's
    for (rank_state& r : w.ranks) {
      if (r.holds_io) continue;
      RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      RING_TRY(copy_rows(token_ranges(p, p.V, e, w.chunks[r.rank]), r.o, r.device, io.o, w.where.devices[0], r.compute));
      RING_TRY(copy_rows(stats_ranges(p, a, w.chunks[r.rank]), r.lse, r.device, io.lse, w.where.devices[0], r.compute));
    }
  }
  std::vector<cudaEvent_t> computed(w.ranks.size()), keys_ready, sums_ready;
  for (int s = 0; s < W; ++s) {
    std::vector<cudaEvent_t> next_ready;
    if (s + 1 < W) RING_TRY(pass_keys(w, m, s, computed, &next_ready));
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      rank_state& r = w.ranks[i];
      cudaEvent_t begin;
      RING_TRY(begin_step(r, m, s, s > 0 ? keys_ready[i] : nullptr, &begin));
      if (s == 0 && p.block == block_kernel::own)
        for (const span& c : w.chunks[r.rank])
          RING_TRY(row_dots_of<T>(p, c, reinterpret_cast<const T*>(r.d_o), reinterpret_cast<const T*>(r.o),
                                  reinterpret_cast<A*>(r.row_dots), r.compute));
      const held_keys kv = keys_at(r, s);
      A* step_dk = reinterpret_cast<A*>(r.step_dk[s % 2]);
      A* step_dv = reinterpret_cast<A*>(r.step_dv[s % 2]);
      const backward_tensors<T> x{reinterpret_cast<const T*>(r.q),   reinterpret_cast<const T*>(kv.k),
                                  reinterpret_cast<const T*>(kv.v),  reinterpret_cast<const T*>(r.o),
                                  reinterpret_cast<const T*>(r.d_o), reinterpret_cast<const A*>(r.lse),
                                  reinterpret_cast<const A*>(r.row_dots), reinterpret_cast<A*>(r.acc_dq),
                                  reinterpret_cast<T*>(r.dq),        step_dk,
                                  step_dv,                           nullptr,
                                  nullptr,                           reinterpret_cast<T*>(r.block_dq),
                                  reinterpret_cast<T*>(r.block_dk),  reinterpret_cast<T*>(r.block_dv),
                                  reinterpret_cast<float*>(r.packed_lse), r.cudnn_workspace};
      // dk/dv go to the step accumulator: the step's first pair of a key chunk sets it.
      std::vector<int64_t> keys_seen;
      for (size_t at : pairs_at(w, r.rank, s)) {
        const block_pair& bp = w.plan[at];
        const bool first = std::find(keys_seen.begin(), keys_seen.end(), bp.kv.begin) == keys_seen.end();
        if (first) keys_seen.push_back(bp.kv.begin);
        RING_TRY(backward_pair<T>(p, bp, w.visits.of_q[at], visit{first, false}, false, x, r.compute));
      }
      RING_TRY(close_span(r, m, begin, &computed[i]));
      // The keys' earlier steps, passed in: joined into the step accumulator (taken as
      // they are by a chunk this rank had no pair with). After the last step the sum is
      // complete: the chunk's dk, dv written out here.
      const int held = kv_source(r.rank, s, W);
      if (s == 0 && s + 1 < W) continue;
      cudaEvent_t join;
      if (s > 0) RING_TRY(timed_wait(r, m, sums_ready[i]));
      RING_TRY(open_span(r, m, &join));
      for (const span& c : w.chunks[held]) {
        const bool had = std::find(keys_seen.begin(), keys_seen.end(), c.begin) != keys_seen.end();
        if (s > 0) {
          RING_TRY(fold_rows<A>(p, c, p.D, visit{!had, false}, reinterpret_cast<const A*>(r.recv_dk), step_dk,
                                nullptr, r.compute));
          RING_TRY(fold_rows<A>(p, c, p.V, visit{!had, false}, reinterpret_cast<const A*>(r.recv_dv), step_dv,
                                nullptr, r.compute));
        }
        if (s + 1 == W) {
          RING_TRY(fold_rows<T>(p, c, p.D, visit{false, true}, nullptr, step_dk, reinterpret_cast<T*>(r.dk),
                                r.compute));
          RING_TRY(fold_rows<T>(p, c, p.V, visit{false, true}, nullptr, step_dv, reinterpret_cast<T*>(r.dv),
                                r.compute));
        }
      }
      RING_TRY(close_span(r, m, join, &computed[i]));
    }
    keys_ready = next_ready;
    if (s + 1 == W) break;
    // The step accumulators on to the next rank.
    RING_TRY(exchange(w, m, computed, [&](rank_state& r) -> status {
      const int held = kv_source(r.rank, s, W), next = kv_source(r.rank, s + 1, W);
      const int to = (r.rank + 1) % W, from = (r.rank + W - 1) % W;
      RING_TRY(send_ranges(token_ranges(p, p.D, a, w.chunks[held]), r.step_dk[s % 2], to, r));
      RING_TRY(send_ranges(token_ranges(p, p.V, a, w.chunks[held]), r.step_dv[s % 2], to, r));
      RING_TRY(recv_ranges(token_ranges(p, p.D, a, w.chunks[next]), r.recv_dk, from, r));
      return recv_ranges(token_ranges(p, p.V, a, w.chunks[next]), r.recv_dv, from, r);
    }, &sums_ready));
  }
  std::vector<cudaEvent_t> gathered;
  RING_TRY(gather(w, m, {{&rank_state::dq, p.D, false}, {&rank_state::dk, p.D, false, 1}, {&rank_state::dv, p.V, false, 1}},
                  computed, &gathered));
  return end_call(w, m, gathered, io.stream);
}

template <typename T> struct forward_call {
  static status run(world_state& w, const forward_io& io) { return forward_typed<T>(w, io); }
};
template <typename T> struct backward_call {
  static status run(world_state& w, const backward_io& io) { return backward_typed<T>(w, io); }
};

// ---- the report -------------------------------------------------------------------------

float elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return 0;
  return ms;
}
float total(const std::vector<std::pair<cudaEvent_t, cudaEvent_t>>& spans) {
  float sum = 0;
  for (const auto& [a, b] : spans) sum += elapsed(a, b);
  return sum;
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
std::string call_report(world_state& w, int m) {
  std::vector<float> rank_ms, compute_ms, comm_ms, exposed_ms;
  std::vector<int> ids;
  float comm = 0, exposed = 0;
  for (rank_state& r : w.ranks) {
    cudaSetDevice(r.device);
    cudaEventSynchronize(r.clock[m].end);
    ids.push_back(r.rank);
    rank_ms.push_back(elapsed(r.clock[m].start, r.clock[m].end));
    compute_ms.push_back(total(r.clock[m].computes));
    comm_ms.push_back(total(r.clock[m].transfers));
    exposed_ms.push_back(total(r.clock[m].stalls));
    comm += comm_ms.back();
    exposed += exposed_ms.back();
  }
  const float hidden = comm > 0 ? std::clamp(1.f - exposed / comm, 0.f, 1.f) : 1.f;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", hidden);
  std::string ranks = "[";
  for (size_t i = 0; i < ids.size(); ++i) ranks += (i ? "," : "") + std::to_string(ids[i]);
  return "{\"ranks\":" + ranks + "],\"rank_ms\":" + list(rank_ms) + ",\"compute_ms\":" + list(compute_ms) +
         ",\"comm_ms\":" + list(comm_ms) + ",\"exposed_comm_ms\":" + list(exposed_ms) +
         ",\"comm_hidden_fraction\":" + buf + "}";
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
  w.plan = ring_schedule(p.T, where.world, p.chunking, p.causal);
  w.visits = visits_of(w.plan);
  RING_CUDA(cudaSetDevice(where.devices[0]), "cudaSetDevice");
  RING_CUDA(cudaEventCreateWithFlags(&w.common_start, cudaEventDisableTiming), "cudaEventCreate");
  w.common_start_device = where.devices[0];
  w.ranks.resize(where.devices.size());
  for (size_t i = 0; i < where.devices.size(); ++i) {
    rank_state& r = w.ranks[i];
    r.rank = where.first_rank + int(i);
    r.device = where.devices[i];
    r.comm = comms[i];
    r.holds_io = i == 0;
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    RING_CUDA(cudaStreamCreateWithFlags(&r.compute, cudaStreamNonBlocking), "cudaStreamCreate");
    RING_CUDA(cudaStreamCreateWithFlags(&r.link, cudaStreamNonBlocking), "cudaStreamCreate");
    int64_t cudnn_fwd = 0, cudnn_bwd = 0;
    if (p.block == block_kernel::cudnn) {  // graphs per device, planned now (untimed)
      RING_TRY(plan_cudnn_blocks(p, false, &cudnn_fwd));
      if (backward) RING_TRY(plan_cudnn_blocks(p, true, &cudnn_bwd));
    }
    const size_t cudnn_bytes = size_t(std::max(cudnn_fwd, cudnn_bwd));
    r.arena_bytes = carve(p, backward, r.holds_io, cudnn_bytes, r, nullptr);
    RING_CUDA(cudaMalloc(&r.arena, r.arena_bytes), "cudaMalloc (the rank's buffers)");
    carve(p, backward, r.holds_io, cudnn_bytes, r, r.arena);
  }
  return {};
}

}  // namespace

status prepare(const problem& p, const placement& where, const forward_io& fwd, const backward_io* bwd) {
  std::lock_guard<std::mutex> guard(state_lock);
  device_guard keep;
  if (where.world < 2 || where.devices.empty()) return "the multi-GPU ring needs at least 2 ranks";
  if (p.shards != where.world) return "the ring's shards must equal its ranks";
  const bool one_process = int(where.devices.size()) == where.world;
  std::vector<nccl::comm> comms;
  if (one_process) {
    RING_TRY(nccl::communicators_for(where.devices, &comms));
  } else {
    comms.resize(1);
    RING_TRY(nccl::process_communicator(where.devices[0], &comms[0]));
  }
  const bool backward = bwd != nullptr;
  // Same problem and placement: keep the buffers, copy the inputs again.
  const bool same = state && state->where.devices == where.devices && state->where.world == where.world &&
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
  const size_t e = storage_bytes(p.dtype);
  for (rank_state& r : w.ranks) {
    if (r.holds_io) continue;
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    const std::vector<span>& mine = w.chunks[r.rank];
    const int from = where.devices[0];
    RING_TRY(copy_rows(token_ranges(p, p.D, e, mine), r.q, r.device, fwd.q, from, r.compute));
    RING_TRY(copy_rows(token_ranges(p, p.D, e, mine), r.k, r.device, fwd.k, from, r.compute));
    RING_TRY(copy_rows(token_ranges(p, p.V, e, mine), r.v, r.device, fwd.v, from, r.compute));
    if (bwd) RING_TRY(copy_rows(token_ranges(p, p.V, e, mine), r.d_o, r.device, bwd->d_o, from, r.compute));
    RING_CUDA(cudaStreamSynchronize(r.compute), "cudaStreamSynchronize (prepare's copies)");
  }
  return {};
}

status run_forward(const problem& p, const forward_io& io) {
  std::lock_guard<std::mutex> guard(state_lock);
  device_guard keep;
  if (!state) return "the multi-GPU ring needs prepare() before its calls";
  return by_dtype<forward_call>(p.dtype, *state, io);
}

status run_backward(const problem& p, const backward_io& io) {
  std::lock_guard<std::mutex> guard(state_lock);
  device_guard keep;
  if (!state) return "the multi-GPU ring needs prepare() before its calls";
  return by_dtype<backward_call>(p.dtype, *state, io);
}

std::string report_json() {
  std::lock_guard<std::mutex> guard(state_lock);
  device_guard keep;
  if (!state || !(state->called[0] || state->called[1])) return {};
  world_state& w = *state;
  std::string s = "{\"world\":" + std::to_string(w.where.world) + ",\"layout\":\"" + layout_name(w.p.chunking) +
                  "\",\"block\":\"" + (w.p.block == block_kernel::cudnn ? "cudnn" : "own") +
                  "\",\"processes\":\"" + (w.one_process ? "one" : "one per rank") +
                  "\",\"nccl_version\":" + std::to_string(nccl::library_version());
  if (w.called[0]) s += ",\"forward\":" + call_report(w, 0);
  if (w.called[1]) s += ",\"backward\":" + call_report(w, 1);
  return s + "}";
}

void release() {
  std::lock_guard<std::mutex> guard(state_lock);
  free_world();
}

}  // namespace glabench::ring::ranks
