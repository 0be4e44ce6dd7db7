// The multi-GPU ring (ring_ranks.hpp). Each rank keeps its shard's rows in buffers of
// its own: its chunks one after another in sequence order ([B,R,H,X], lse [B,H,R], with
// R the longest shard's rows, so one geometry fits every rank), and at each step computes
// one block of those rows against the key/value shard it holds (ring_plan.hpp's
// rank_step, ring-flash-attention's step structure).
//
// Forward, per rank r of W, at step s = 0 … W−1 (kv_source(r, s) = r − s is whose keys
// r has):
//   link stream:    send the key/value shard held now to r+1, receive step s+1's from
//                   r−1 into ring buffer (s+1) mod 2 (after step s−1's compute freed it);
//   compute stream: wait for step s's keys, run the step's block and merge it into the
//                   query rows' running o and lse.
// Backward walks the same steps in reverse (s = W−1 … 0, backward_typed): keys and the
// held keys' dk/dv sums travel to r−1, and each sum ends at its keys' home at s = 0.
// The call ends when every rank holds the outputs of its own shard. collect() (untimed)
// then brings them to the caller's tensors: to the rank on the caller's device (one
// process) or to every rank (one process per rank).
// Events around every wait of the compute stream and every transfer give the report:
// per-rank time, compute, communication, and the communication compute did not hide.
#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>

#include "nccl_link.hpp"
#include "pair_steps.hpp"
#include "ring_ranks.hpp"
#include "workspace_carver.hpp"

namespace glabench::ring::ranks {
namespace {

#define RING_TRY(expr)                              \
  do {                                              \
    if (status s_ = (expr); !s_.empty()) return s_; \
  } while (0)
#define RING_CUDA(expr, what)                                 \
  do {                                                        \
    if (cudaError_t e_ = (expr)) return cuda_error(e_, what); \
  } while (0)

// Leaves the calling thread's current device as it found it.
struct device_guard {
  int previous = 0;
  device_guard() { cudaGetDevice(&previous); }
  ~device_guard() { cudaSetDevice(previous); }
};

size_t storage_bytes(storage s) {
  return s == storage::fp64 ? 8 : s == storage::fp32 ? 4 : 2;
}
size_t acc_bytes(storage s) {
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

// A shard's chunks at their local rows.
std::vector<span> local_spans(const std::vector<span>& chunks) {
  std::vector<span> out;
  for (size_t i = 0; i < chunks.size(); ++i) out.push_back(local_rows(chunks, i));
  return out;
}

// Local rows [0, n) less the block's query rows (of_queries) or key rows: the rows a
// step's block did not cover (0, 1 or 2 spans; all of them without a block).
std::vector<span> rows_outside(int64_t n, const std::optional<step_block>& blk, bool of_queries) {
  if (!blk) return {span{0, n}};
  const span t = of_queries ? blk->q : blk->kv;
  std::vector<span> out;
  if (t.begin > 0) out.push_back({0, t.begin});
  if (t.end < n) out.push_back({t.end, n});
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

// The rank's buffers, carved in order from one arena (base null: only counts). `lp` is
// the local problem (T = rows per batch of every rank's buffers).
size_t carve(const problem& lp, bool backward, size_t cudnn_bytes, rank_state& r, char* base) {
  carver c{base};
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

// Rows between two tensors, on `stream`: range i of `from` to range i of `to` (lists
// built from the same chunks).
status copy_ranges(const std::vector<byte_range>& to, char* dst, int dst_device,
                   const std::vector<byte_range>& from, const char* src, int src_device,
                   cudaStream_t stream) {
  for (size_t i = 0; i < to.size(); ++i)
    RING_CUDA(cudaMemcpyPeerAsync(dst + to[i].offset, dst_device, src + from[i].offset, src_device,
                                  to[i].bytes, stream),
              "cudaMemcpyPeerAsync");
  return {};
}

// The whole of a rank's [B,R,H,X] buffer (its padding rows too: one transfer).
size_t buffer_bytes(const problem& lp, int X, size_t elem) {
  return size_t(lp.B) * lp.T * lp.H * X * elem;
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

// A step begins on rank r: its device current, its keys waited for (null: they are
// here), a span opened.
status begin_step(rank_state& r, int m, cudaEvent_t keys_ready, cudaEvent_t* begin) {
  RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
  if (keys_ready) RING_TRY(timed_wait(r, m, keys_ready));
  return open_span(r, m, begin);
}

// One rank's side of a transfer: `bytes` from `data` to `peer`, or from `peer` into it.
struct message {
  bool send;
  char* data;
  size_t bytes;
  int peer;
};
message send_to(const char* data, size_t bytes, int peer) {
  return {true, const_cast<char*>(data), bytes, peer};
}
message recv_from(char* data, size_t bytes, int peer) {
  return {false, data, bytes, peer};
}

// Every rank's link stream: wait for `after[r]` (null: nothing), then every rank's
// messages (`ops(rank, &messages)` lists them); returns each rank's event at the end of
// its transfers, sent and received.
// - One process: copy engines (cudaMemcpyPeerAsync), so the transfers take no SMs from
//   the blocks they overlap. Each copy runs on the receiver's link stream once both
//   sides have waited for `after`; each sender's link stream then waits for the copies
//   that read its buffers.
// - One process per rank: one NCCL group.
template <typename Ops>
status exchange(world_state& w, int m, const std::vector<cudaEvent_t>& after, Ops ops,
                std::vector<cudaEvent_t>* done) {
  const size_t n = w.ranks.size();
  done->assign(n, nullptr);
  std::vector<cudaEvent_t> begin(n);
  std::vector<std::vector<message>> msgs(n);
  for (size_t i = 0; i < n; ++i) {
    rank_state& r = w.ranks[i];
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    if (!after.empty() && after[i])
      RING_CUDA(cudaStreamWaitEvent(r.link, after[i], 0), "cudaStreamWaitEvent");
    RING_TRY(r.pool[m].take(&begin[i]));
    RING_TRY(r.pool[m].take(&(*done)[i]));
    RING_CUDA(cudaEventRecord(begin[i], r.link), "cudaEventRecord");
    RING_TRY(ops(r, &msgs[i]));
  }
  if (w.one_process) {
    // Rank r is w.ranks[r] here. The k-th send of a to b pairs with b's k-th receive from a.
    std::vector<cudaEvent_t> copied(n);
    for (size_t b = 0; b < n; ++b) {
      rank_state& to = w.ranks[b];
      RING_CUDA(cudaSetDevice(to.device), "cudaSetDevice");
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
        RING_CUDA(cudaStreamWaitEvent(to.link, begin[a], 0), "cudaStreamWaitEvent");
        if (in.bytes)
          RING_CUDA(cudaMemcpyPeerAsync(in.data, to.device, match->data, w.ranks[a].device,
                                        in.bytes, to.link),
                    "cudaMemcpyPeerAsync");
      }
      RING_TRY(to.pool[m].take(&copied[b]));
      RING_CUDA(cudaEventRecord(copied[b], to.link), "cudaEventRecord");
    }
    for (size_t a = 0; a < n; ++a) {
      rank_state& from = w.ranks[a];
      RING_CUDA(cudaSetDevice(from.device), "cudaSetDevice");
      for (const message& x : msgs[a])
        if (x.send)
          RING_CUDA(cudaStreamWaitEvent(from.link, copied[size_t(x.peer)], 0),
                    "cudaStreamWaitEvent");
    }
  } else {
    RING_TRY(nccl::group_start());
    status failed;
    for (size_t i = 0; i < n && failed.empty(); ++i)
      for (const message& x : msgs[i]) {
        if (!x.bytes) continue;
        rank_state& r = w.ranks[i];
        failed = x.send ? nccl::send(x.data, x.bytes, x.peer, r.comm, r.link)
                        : nccl::recv(x.data, x.bytes, x.peer, r.comm, r.link);
        if (!failed.empty()) break;
      }
    RING_TRY(nccl::group_end());
    if (!failed.empty()) return failed;
  }
  for (size_t i = 0; i < n; ++i) {
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

// The end: each compute stream waits for its last transfer (none: empty), the caller's
// stream for every rank.
status end_call(world_state& w, int m, const std::vector<cudaEvent_t>& last_transfer,
                cudaStream_t caller) {
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    rank_state& r = w.ranks[i];
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    if (!last_transfer.empty()) RING_TRY(timed_wait(r, m, last_transfer[i]));
    RING_CUDA(cudaEventRecord(r.clock[m].end, r.compute), "cudaEventRecord");
  }
  for (rank_state& r : w.ranks)
    RING_CUDA(cudaStreamWaitEvent(caller, r.clock[m].end, 0), "cudaStreamWaitEvent");
  w.called[m] = true;
  return {};
}

// The key/value shards for step `next` around the ring: each rank sends the shard it
// holds at step `now` on (to r+1 forward, r−1 backward) and receives the one for `next`
// into ring buffer next mod 2, once `after` (the compute that last read it) is done.
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

// Rank r's block at step s as a pair of pair_steps.hpp (in local rows).
block_pair pair_of(int r, int s, int W, const step_block& blk) {
  return {r, kv_source(r, s, W), s, blk.q, blk.kv, blk.mask};
}

status check_inputs(const world_state& w, const void* q, const void* k, const void* v) {
  if (q != w.io_q || k != w.io_k || v != w.io_v)
    return "the inputs differ from the ones prepare() was given (multi-GPU calls need prepare "
           "first)";
  return {};
}

template <typename T>
status forward_typed(world_state& w, const forward_io& io) {
  using A = acc_t<T>;
  const problem& lp = w.local;
  const int W = w.where.world, m = 0;
  RING_TRY(check_inputs(w, io.q, io.k, io.v));
  RING_TRY(begin_call(w, m, io.stream));
  // cuDNN on two ranks: o itself holds the running result (each block is in the storage
  // dtype already, so one merge of two of them rounds once, as through acc_o), which
  // saves two passes over the compute-type accumulator.
  const bool in_o = W == 2 && lp.block == block_kernel::cudnn;
  std::vector<cudaEvent_t> computed(w.ranks.size()), keys_ready;
  for (int s = 0; s < W; ++s) {
    std::vector<cudaEvent_t> next_ready;
    // Ring buffer (s+1) mod 2 was last read at step s−1 (none before step 1).
    if (s + 1 < W)
      RING_TRY(pass_keys(w, m, s, s + 1, true, s >= 2 ? computed : std::vector<cudaEvent_t>{},
                         &next_ready));
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      rank_state& r = w.ranks[i];
      cudaEvent_t begin;
      RING_TRY(begin_step(r, m, s > 0 ? keys_ready[i] : nullptr, &begin));
      const held_keys kv = keys_at(r, s);
      // lse is its own accumulator: the merge reads a row's lse before writing it.
      const forward_tensors<T> x{reinterpret_cast<const T*>(r.q),
                                 reinterpret_cast<const T*>(kv.k),
                                 reinterpret_cast<const T*>(kv.v),
                                 reinterpret_cast<A*>(r.acc_o),
                                 reinterpret_cast<A*>(r.lse),
                                 reinterpret_cast<T*>(r.o),
                                 reinterpret_cast<A*>(r.lse),
                                 reinterpret_cast<T*>(r.block_o),
                                 reinterpret_cast<float*>(r.block_stats),
                                 r.cudnn_workspace,
                                 in_o ? reinterpret_cast<const T*>(r.o) : nullptr};
      const std::optional<step_block>& blk = w.steps[size_t(r.rank)][size_t(s)];
      if (in_o) {
        // Step 0 writes o and lse; step 1 merges into them; a row it does not cover is done.
        if (blk)
          RING_TRY(forward_pair<T>(lp, pair_of(r.rank, s, W, *blk), visit{s == 0, true}, s == 0, x,
                                   r.compute));
      } else {
        // Step 0 covers every row (first); the last step writes o for the rows it covers,
        // and the rows whose last block came earlier are written from their accumulator.
        if (blk)
          RING_TRY(forward_pair<T>(lp, pair_of(r.rank, s, W, *blk), visit{s == 0, s + 1 == W},
                                   false, x, r.compute));
        if (s + 1 == W)
          for (const span& rows : rows_outside(r.rows, blk, true))
            RING_TRY(
                fold_rows<T>(lp, rows, lp.V, visit{false, true}, nullptr, x.acc_o, x.o, r.compute));
      }
      RING_TRY(close_span(r, m, begin, &computed[i]));
    }
    keys_ready = next_ready;
  }
  RING_TRY(end_call(w, m, {}, io.stream));
  w.forward_ran = true;
  w.next_keys_held = true;  // ring buffer (W−1) mod 2: r+1's keys, the backward's first
  w.pending.o = io.o, w.pending.lse = io.lse;
  return {};
}

// Rows of a rank's [B,R,H,X] buffer set to zero (the rows a step's block left unwritten).
status zero_rows(const problem& lp, int X, size_t elem, const std::vector<span>& rows, char* base,
                 cudaStream_t stream) {
  const size_t row = size_t(lp.H) * X * elem;
  for (const span& c : rows)
    if (c.size() > 0)
      RING_CUDA(cudaMemset2DAsync(base + size_t(c.begin) * row, size_t(lp.T) * row, 0,
                                  size_t(c.size()) * row, size_t(lp.B), stream),
                "cudaMemset2DAsync");
  return {};
}

// The backward walks the ring's steps in reverse, s = W−1 … 0, so that each key shard's
// dk/dv sum ends at its home. At step s rank r holds shard r−s: first r+1's, which the
// forward's last step left in ring buffer (W−1) mod 2; each later one comes from r+1,
// and the sums travel the same way, to r−1. At s = 0 every rank holds its own keys, its
// block covers every row, and it writes dq, dk and dv.
// cuDNN: each block's gradients land in block buffers (the rows it does not cover set to
// zero) and are summed whole-shard: dq on the rank, dk/dv into the sum that r+1 passed on.
// The first step's dk/dv travel as cuDNN wrote them (storage dtype: nothing is lost, and
// half the bytes); later sums in the compute type. The own kernel folds into zeroed
// accumulators itself.
template <typename T>
status backward_typed(world_state& w, const backward_io& io) {
  using A = acc_t<T>;
  const problem& lp = w.local;
  const int W = w.where.world, m = 1;
  if (!w.backward) return "prepare() was given no backward arguments";
  RING_TRY(check_inputs(w, io.q, io.k, io.v));
  if (io.d_o != w.io_do) return "d_o differs from the one prepare() was given";
  RING_TRY(begin_call(w, m, io.stream));
  const size_t e = storage_bytes(lp.dtype), a = acc_bytes(lp.dtype);
  // Values in a rank's buffer of D columns (q, dq, dk) and of V columns (dv).
  const int64_t n_d = int64_t(lp.B) * lp.T * lp.H * lp.D, n_v = int64_t(lp.B) * lp.T * lp.H * lp.V;
  std::vector<cudaEvent_t> computed(w.ranks.size()), keys_ready, sums_ready;
  if (!w.forward_ran) {  // the ranks' o and lse are not the forward's: take the caller's
    for (rank_state& r : w.ranks) {
      RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      const std::vector<span>&seq = w.chunks[size_t(r.rank)], loc = local_spans(seq);
      const int from = w.where.devices[0];
      RING_TRY(copy_ranges(row_ranges(lp, lp.T, lp.V, e, loc), r.o, r.device,
                           row_ranges(w.p, w.p.T, lp.V, e, seq), static_cast<const char*>(io.o),
                           from, r.compute));
      RING_TRY(copy_ranges(row_ranges(lp, lp.T, 0, a, loc), r.lse, r.device,
                           row_ranges(w.p, w.p.T, 0, a, seq), static_cast<const char*>(io.lse),
                           from, r.compute));
    }
  }
  // r+1's keys, unless the forward's last step left them in ring buffer (W−1) mod 2.
  if (!w.next_keys_held) RING_TRY(pass_keys(w, m, 0, W - 1, false, {}, &keys_ready));
  const bool cudnn = lp.block == block_kernel::cudnn;
  for (int t = 0; t < W; ++t) {
    const int s = W - 1 - t;
    const bool last = t + 1 == W;
    std::vector<cudaEvent_t> next_ready;
    // Step s−1's keys into ring buffer (s−1) mod 2, last read at step s+1 (none before);
    // at s − 1 = 0 every rank has its own.
    if (s - 1 >= 1) {
      RING_TRY(pass_keys(w, m, s, s - 1, false, t >= 1 ? computed : std::vector<cudaEvent_t>{},
                         &next_ready));
      w.next_keys_held = false;  // the ring buffers now hold other shards
    }
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      rank_state& r = w.ranks[i];
      cudaEvent_t begin;
      RING_TRY(begin_step(r, m, keys_ready.empty() ? nullptr : keys_ready[i], &begin));
      const held_keys kv = keys_at(r, s);
      const int b = t % 2;
      const backward_tensors<T> x{reinterpret_cast<const T*>(r.q),
                                  reinterpret_cast<const T*>(kv.k),
                                  reinterpret_cast<const T*>(kv.v),
                                  reinterpret_cast<const T*>(r.o),
                                  reinterpret_cast<const T*>(r.d_o),
                                  reinterpret_cast<const A*>(r.lse),
                                  reinterpret_cast<const A*>(r.row_dots),
                                  reinterpret_cast<A*>(r.acc_dq),
                                  reinterpret_cast<T*>(r.dq),
                                  reinterpret_cast<A*>(r.acc_dk[b]),
                                  reinterpret_cast<A*>(r.acc_dv[b]),
                                  reinterpret_cast<T*>(r.dk),
                                  reinterpret_cast<T*>(r.dv),
                                  reinterpret_cast<T*>(r.block_dq[b]),
                                  reinterpret_cast<T*>(r.block_dk[b]),
                                  reinterpret_cast<T*>(r.block_dv[b]),
                                  reinterpret_cast<float*>(r.packed_lse),
                                  r.cudnn_workspace};
      const std::optional<step_block>& blk = w.steps[size_t(r.rank)][size_t(s)];
      const int64_t held_rows = shard_rows(w.chunks[size_t(kv_source(r.rank, s, W))]);
      if (cudnn) {
        if (blk)
          RING_TRY(cudnn_backward_block<T>(lp, pair_of(r.rank, s, W, *blk), false, x, r.compute));
        const std::vector<span> q_rest = rows_outside(r.rows, blk, true),
                                kv_rest = rows_outside(held_rows, blk, false);
        RING_TRY(zero_rows(lp, lp.D, e, q_rest, r.block_dq[b], r.compute));
        RING_TRY(zero_rows(lp, lp.D, e, kv_rest, r.block_dk[b], r.compute));
        RING_TRY(zero_rows(lp, lp.V, e, kv_rest, r.block_dv[b], r.compute));
        // (sum so far) + this block: into the compute-type sum, or at the last step the
        // output. The sum so far is the first step's block (storage dtype) at t = 1.
        auto add_block = [&](int64_t n, const auto* so_far, const T* block, A* sum, T* out) {
          return last ? sum_values<T>(n, so_far, block, out, r.compute)
                      : sum_values<T>(n, so_far, block, sum, r.compute);
        };
        // dq: the first step's block waits for the second.
        if (t == 1)
          RING_TRY(add_block(n_d, reinterpret_cast<const T*>(r.block_dq[0]), x.block_dq, x.acc_dq,
                             x.dq));
        if (t >= 2) RING_TRY(add_block(n_d, x.acc_dq, x.block_dq, x.acc_dq, x.dq));
        // dk, dv: into the sum r+1 passed on (its first step's as cuDNN wrote them).
        if (t >= 1) {
          RING_TRY(timed_wait(r, m, sums_ready[i]));
          if (t == 1) {
            RING_TRY(
                add_block(n_d, reinterpret_cast<const T*>(r.recv_dk), x.block_dk, x.acc_dk, x.dk));
            RING_TRY(
                add_block(n_v, reinterpret_cast<const T*>(r.recv_dv), x.block_dv, x.acc_dv, x.dv));
          } else {
            RING_TRY(add_block(n_d, x.acc_dk, x.block_dk, x.acc_dk, x.dk));
            RING_TRY(add_block(n_v, x.acc_dv, x.block_dv, x.acc_dv, x.dv));
          }
        }
      } else {
        if (t == 0) {  // the kernels fold into zeroed accumulators
          RING_TRY(row_dots_of<T>(lp, span{0, r.rows}, x.d_o, x.o, reinterpret_cast<A*>(r.row_dots),
                                  r.compute));
          RING_CUDA(cudaMemsetAsync(r.acc_dq, 0, size_t(n_d) * a, r.compute), "cudaMemsetAsync");
          RING_CUDA(cudaMemsetAsync(r.acc_dk[b], 0, size_t(n_d) * a, r.compute), "cudaMemsetAsync");
          RING_CUDA(cudaMemsetAsync(r.acc_dv[b], 0, size_t(n_v) * a, r.compute), "cudaMemsetAsync");
        } else {
          RING_TRY(timed_wait(r, m, sums_ready[i]));
        }
        if (blk)
          RING_TRY(backward_pair<T>(lp, pair_of(r.rank, s, W, *blk), visit{false, last},
                                    visit{false, last}, false, x, r.compute));
      }
      RING_TRY(close_span(r, m, begin, &computed[i]));
    }
    keys_ready = next_ready;
    if (last) break;
    // The held keys' sums on to r−1; the next keys' arrive from r+1.
    const bool as_written = cudnn && t == 0;
    const int nb = (t + 1) % 2;
    RING_TRY(exchange(
        w, m, computed,
        [&](rank_state& r, std::vector<message>* out) -> status {
          const int to = (r.rank + W - 1) % W, from = (r.rank + 1) % W;
          const int b = t % 2;
          const size_t elem = as_written ? e : a, k_bytes = buffer_bytes(lp, lp.D, elem),
                       v_bytes = buffer_bytes(lp, lp.V, elem);
          *out = {send_to(as_written ? r.block_dk[0] : r.acc_dk[b], k_bytes, to),
                  send_to(as_written ? r.block_dv[0] : r.acc_dv[b], v_bytes, to),
                  recv_from(as_written ? r.recv_dk : r.acc_dk[nb], k_bytes, from),
                  recv_from(as_written ? r.recv_dv : r.acc_dv[nb], v_bytes, from)};
          return {};
        },
        &sums_ready));
  }
  RING_TRY(end_call(w, m, {}, io.stream));
  w.pending.dq = io.dq, w.pending.dk = io.dk, w.pending.dv = io.dv;
  return {};
}

template <typename T>
struct forward_call {
  static status run(world_state& w, const forward_io& io) { return forward_typed<T>(w, io); }
};
template <typename T>
struct backward_call {
  static status run(world_state& w, const backward_io& io) { return backward_typed<T>(w, io); }
};

// ---- collect: the outputs to the caller's tensors (untimed) ------------------------------

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
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    RING_CUDA(cudaStreamSynchronize(r.compute), "cudaStreamSynchronize (before collect)");
    RING_CUDA(cudaStreamSynchronize(r.link), "cudaStreamSynchronize (before collect)");
  }
  if (w.one_process) {
    const int caller = w.where.devices[0];
    for (rank_state& r : w.ranks) {
      RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      const std::vector<span>& seq = w.chunks[size_t(r.rank)];
      for (const output_tensor& t : outs)
        RING_TRY(copy_ranges(row_ranges(p, p.T, t.X, t.elem, seq), static_cast<char*>(t.caller),
                             caller, row_ranges(p, w.local.T, t.X, t.elem, local_spans(seq)),
                             r.*t.member, r.device, r.link));
    }
    for (rank_state& r : w.ranks) {
      RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      RING_CUDA(cudaStreamSynchronize(r.link), "cudaStreamSynchronize (collect)");
    }
    return {};
  }
  RING_TRY(nccl::group_start());
  status failed;
  for (rank_state& r : w.ranks) {
    if (!failed.empty()) break;
    failed = [&]() -> status {
      RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      for (int peer = 0; peer < W; ++peer) {
        if (peer == r.rank) continue;
        for (const output_tensor& t : outs) {
          for (const byte_range& x :
               row_ranges(p, w.local.T, t.X, t.elem, local_spans(w.chunks[size_t(r.rank)])))
            if (x.bytes)
              RING_TRY(nccl::send(r.*t.member + x.offset, x.bytes, peer, r.comm, r.link));
          for (const byte_range& x : row_ranges(p, p.T, t.X, t.elem, w.chunks[size_t(peer)]))
            if (x.bytes)
              RING_TRY(nccl::recv(static_cast<char*>(t.caller) + x.offset, x.bytes, peer, r.comm,
                                  r.link));
        }
      }
      return {};
    }();
  }
  RING_TRY(nccl::group_end());
  if (!failed.empty()) return failed;
  for (rank_state& r : w.ranks) {
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    const std::vector<span>& seq = w.chunks[size_t(r.rank)];
    for (const output_tensor& t : outs)
      RING_TRY(copy_ranges(row_ranges(p, p.T, t.X, t.elem, seq), static_cast<char*>(t.caller),
                           r.device, row_ranges(p, w.local.T, t.X, t.elem, local_spans(seq)),
                           r.*t.member, r.device, r.link));
    RING_CUDA(cudaStreamSynchronize(r.link), "cudaStreamSynchronize (collect)");
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
  RING_TRY(gather(w, outs));
  w.collect_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  w.pending = {};
  return {};
}

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
  return "{\"ranks\":" + ranks + "],\"rank_ms\":" + list(rank_ms) +
         ",\"compute_ms\":" + list(compute_ms) + ",\"comm_ms\":" + list(comm_ms) +
         ",\"exposed_comm_ms\":" + list(exposed_ms) + ",\"comm_hidden_fraction\":" + buf + "}";
}

// The problem as a rank's buffers see it: T = the longest shard's rows.
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
  RING_CUDA(cudaSetDevice(where.devices[0]), "cudaSetDevice");
  RING_CUDA(cudaEventCreateWithFlags(&w.common_start, cudaEventDisableTiming), "cudaEventCreate");
  w.common_start_device = where.devices[0];
  // One process: the ranks' copies go device to device over NVLink where it exists.
  if (one_process)
    for (int from : where.devices)
      for (int to : where.devices) {
        int can = 0;
        if (from == to || cudaDeviceCanAccessPeer(&can, to, from) != cudaSuccess || !can) continue;
        RING_CUDA(cudaSetDevice(to), "cudaSetDevice");
        const cudaError_t e = cudaDeviceEnablePeerAccess(from, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();  // enabled before (this process's earlier world): fine
        else
          RING_CUDA(e, "cudaDeviceEnablePeerAccess");
      }
  w.ranks.resize(where.devices.size());
  for (size_t i = 0; i < where.devices.size(); ++i) {
    rank_state& r = w.ranks[i];
    r.rank = where.first_rank + int(i);
    r.device = where.devices[i];
    r.comm = comms[i];
    r.rows = shard_rows(w.chunks[size_t(r.rank)]);
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    RING_CUDA(cudaStreamCreateWithFlags(&r.compute, cudaStreamNonBlocking), "cudaStreamCreate");
    RING_CUDA(cudaStreamCreateWithFlags(&r.link, cudaStreamNonBlocking), "cudaStreamCreate");
    int64_t cudnn_fwd = 0, cudnn_bwd = 0;
    if (p.block == block_kernel::cudnn) {  // graphs per device, planned now (untimed)
      RING_TRY(plan_cudnn_steps(p, false, &cudnn_fwd));
      if (backward) RING_TRY(plan_cudnn_steps(p, true, &cudnn_bwd));
    }
    const size_t cudnn_bytes = size_t(std::max(cudnn_fwd, cudnn_bwd));
    r.arena_bytes = carve(w.local, backward, cudnn_bytes, r, nullptr);
    RING_CUDA(cudaMalloc(&r.arena, r.arena_bytes), "cudaMalloc (the rank's buffers)");
    // Padding rows travel with whole buffers: zeros, never read.
    RING_CUDA(cudaMemset(r.arena, 0, r.arena_bytes), "cudaMemset (the rank's buffers)");
    carve(w.local, backward, cudnn_bytes, r, r.arena);
  }
  return {};
}

}  // namespace

status plan_cudnn_steps(const problem& p, bool backward, int64_t* most_workspace_bytes) {
  const auto chunks = shard_chunks(p.T, p.shards, p.chunking);
  const auto steps = steps_of(chunks, p.causal);
  std::vector<block_pair> blocks;
  for (int r = 0; r < p.shards; ++r)
    for (int s = 0; s < p.shards; ++s)
      if (const std::optional<step_block>& blk = steps[size_t(r)][size_t(s)])
        blocks.push_back(pair_of(r, s, p.shards, *blk));
  return plan_cudnn_pairs(local_problem(p, chunks), blocks, backward, most_workspace_bytes);
}

status prepare(const problem& p, const placement& where, const forward_io& fwd,
               const backward_io* bwd) {
  std::lock_guard<std::mutex> guard(state_lock);
  device_guard keep;
  if (where.world < 2 || where.devices.empty()) return "the multi-GPU ring needs at least 2 ranks";
  if (p.shards != where.world) return "the ring's shards must equal its ranks";
  // One process moves everything with the copy engines, NCCL only one process per rank.
  const bool one_process = int(where.devices.size()) == where.world;
  std::vector<nccl::comm> comms(where.devices.size(), nullptr);
  if (!one_process) RING_TRY(nccl::process_communicator(where.devices[0], &comms[0]));
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
    RING_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    const std::vector<span>&seq = w.chunks[size_t(r.rank)], loc = local_spans(seq);
    auto rows_of = [&](const void* src, char* dst, int X) {
      return copy_ranges(row_ranges(p, w.local.T, X, e, loc), dst, r.device,
                         row_ranges(p, p.T, X, e, seq), static_cast<const char*>(src), from,
                         r.compute);
    };
    RING_TRY(rows_of(fwd.q, r.q, p.D));
    RING_TRY(rows_of(fwd.k, r.k, p.D));
    RING_TRY(rows_of(fwd.v, r.v, p.V));
    if (bwd) RING_TRY(rows_of(bwd->d_o, r.d_o, p.V));
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

status collect() {
  std::lock_guard<std::mutex> guard(state_lock);
  device_guard keep;
  if (!state) return {};
  return collect_pending(*state);
}

std::string report_json() {
  std::lock_guard<std::mutex> guard(state_lock);
  device_guard keep;
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
  if (w.called[0]) s += ",\"forward\":" + call_report(w, 0);
  if (w.called[1]) s += ",\"backward\":" + call_report(w, 1);
  return s + "}";
}

void release() {
  std::lock_guard<std::mutex> guard(state_lock);
  free_world();
}

}  // namespace glabench::ring::ranks
