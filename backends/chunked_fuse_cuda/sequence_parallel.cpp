// Sequence-parallel gla across ranks (sequence_parallel.hpp).
#include "sequence_parallel.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

#include "../common/device_guard.hpp"
#include "../common/workspace_carver.hpp"

namespace glabench::chunked::sequence {
namespace {

using cuda_plugin::carver;
using cuda_plugin::cuda_error;
using cuda_plugin::device_guard;
namespace nccl = cuda_plugin::nccl;

// The events a group's steps leave, in order: on the rank's stream its contribution's
// start and end; on its exchange stream the exchange's start and end; on its stream the
// carried walk's start (once the exchange is in) and end.
enum phase {
  contribution_start,
  contribution_end,
  exchange_start,
  exchange_end,
  walk_start,
  walk_end,
  kPhases
};

// One group of a rank's heads, [index·Hg, (index+1)·Hg) with Hg = H / groups: a call of its
// own, with buffers of its own.
struct group_state {
  int index = 0;
  // Its contribution made (the rank's stream); the contributions it needs gathered (the
  // rank's exchange stream).
  cudaEvent_t contributed = nullptr, gathered_in = nullptr;
  cudaEvent_t phase[kPhases] = {};  // the last call's, where it was not captured
  // Its tokens ([B, part.count, Hg, D]).
  void *q = nullptr, *k = nullptr, *v = nullptr, *g = nullptr, *o = nullptr;
  void *d_o = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr, *dg = nullptr;
  // The caller's h0 and dht (state dtype; null when absent); its own contribution and the
  // gathered ones (accumulator type); the carried states and its ht / dh0 (accumulator
  // type), and a state in the caller's dtype for collect. States [B, Hg, K, V].
  void *h0 = nullptr, *dht = nullptr, *contribution = nullptr, *gathered = nullptr;
  void *carry_h0 = nullptr, *carry_dht = nullptr, *ht_acc = nullptr, *dh0_acc = nullptr;
  void *state_out = nullptr, *workspace = nullptr;
};

struct rank_state {
  int index = 0, device = 0;  // its rank in the world
  token_part part{};
  // Its calls' stream, and the stream its exchanges run on beside them.
  cudaStream_t stream = nullptr, exchange_stream = nullptr;
  cudaEvent_t done = nullptr;  // its call done
  char* arena = nullptr;
  std::vector<group_state> groups;
  // One process per rank in groups: a group's rows of one rank's outputs, or a state, as
  // broadcast, before they go to their place among the caller's heads.
  void* staging = nullptr;
};

struct world_state {
  call p{};                              // the whole problem as prepared
  bool backward = false, timed = false;  // timed: the last call's phases were recorded
  int world = 1, groups = 1;
  bool one_process = true;
  nccl::comm comm = nullptr;      // one process per rank: its communicator
  std::vector<rank_state> ranks;  // this process's
  cudaEvent_t entry = nullptr;    // on rank 0's device: the caller's stream at a call's start
  call pending{};                 // its outputs: those of the calls since the last collect
};

std::mutex state_lock;
std::optional<world_state> state;

bool same_problem(const call& a, const call& b) {
  return a.dtype == b.dtype && a.path == b.path && a.B == b.B && a.H == b.H && a.K == b.K &&
         a.V == b.V && a.T == b.T && a.state_fp32 == b.state_fp32;
}

int group_heads(const world_state& w) {
  return w.p.H / w.groups;
}
size_t state_elems(const call& p, int heads) {
  return static_cast<size_t>(p.B) * heads * p.K * p.V;
}
size_t state_bytes(const call& p) {
  return p.state_fp32 ? 4 : storage_bytes(p.dtype);
}

// A group's share of a token tensor ([B,T,H,D]: its heads of a rank's tokens) or of a state
// ([B,H,K,V]: its heads), as a 2D copy: `rows` rows of `width` bytes, `pitch` bytes apart
// in the caller's tensor and `width` apart in the group's own, from `caller_at` there.
struct strided_block {
  size_t caller_at, width, pitch, rows;
};
strided_block token_block(const call& p, token_part part, int groups, int g, int D, int b) {
  const size_t es = storage_bytes(p.dtype), Hg = p.H / groups;
  const size_t token = static_cast<size_t>(p.H) * D * es;
  return {b * token * p.T + token * part.first + g * Hg * D * es, Hg * D * es, token,
          static_cast<size_t>(part.count)};
}
strided_block state_block(const call& p, int groups, int g, size_t es) {
  const size_t Hg = p.H / groups, head = static_cast<size_t>(p.K) * p.V * es;
  return {g * Hg * head, Hg * head, p.H * head, static_cast<size_t>(p.B)};
}

// Between the caller's tensor and a group's own (`to_group`); batch row b of a token
// tensor at `group_at` in the group's.
cudaError_t copy_block(const strided_block& x, void* group_side, size_t group_at, void* caller,
                       bool to_group, cudaStream_t stream) {
  char* mine = static_cast<char*>(group_side) + group_at;
  char* theirs = static_cast<char*>(caller) + x.caller_at;
  return to_group ? cudaMemcpy2DAsync(mine, x.width, theirs, x.pitch, x.width, x.rows,
                                      cudaMemcpyDefault, stream)
                  : cudaMemcpy2DAsync(theirs, x.pitch, mine, x.width, x.width, x.rows,
                                      cudaMemcpyDefault, stream);
}

// A group's rows of a token tensor, every batch row, between the caller's tensor and its own.
status copy_rows(const world_state& w, const rank_state& r, int g, int D, void* group_side,
                 void* caller, bool to_group, cudaStream_t stream) {
  const call& p = w.p;
  for (int b = 0; b < p.B; ++b) {
    const strided_block x = token_block(p, r.part, w.groups, g, D, b);
    if (cudaError_t e = copy_block(x, group_side, b * x.width * x.rows, caller, to_group, stream))
      return cuda_error(e, to_group ? "scatter a rank's tokens" : "gather a rank's outputs");
  }
  return {};
}

// The call's token outputs: each one's width, the group's buffer and the caller's tensor
// (null where the call has none).
struct output_rows {
  int D;
  void *group_side, *caller;
};
std::array<output_rows, 5> outputs_of(const call& p, const group_state& s, const call& out) {
  return {{{p.V, s.o, out.o},
           {p.K, s.dq, out.dq},
           {p.K, s.dk, out.dk},
           {p.V, s.dv, out.dv},
           {p.K, s.dg, out.dg}}};
}

// A group's buffers, carved from its rank's arena (a null base only counts).
void carve_group(const call& p, bool backward, int W, int Hg, const rank_state& r, group_state& s,
                 carver& w) {
  const size_t tok = static_cast<size_t>(p.B) * r.part.count * Hg * storage_bytes(p.dtype);
  const size_t tk = tok * p.K, tv = tok * p.V, acc = acc_bytes(p.dtype);
  const size_t contribution = contribution_elems(p.B, Hg, p.K, p.V) * acc;
  const size_t caller_state = state_elems(p, Hg) * state_bytes(p);
  s.q = w.take<char>(tk), s.k = w.take<char>(tk), s.g = w.take<char>(tk);
  s.v = w.take<char>(tv), s.o = w.take<char>(tv);
  if (backward) {
    s.d_o = w.take<char>(tv), s.dv = w.take<char>(tv);
    s.dq = w.take<char>(tk), s.dk = w.take<char>(tk), s.dg = w.take<char>(tk);
  }
  s.h0 = p.h0 ? w.take<char>(caller_state) : nullptr;
  s.dht = backward && p.dht ? w.take<char>(caller_state) : nullptr;
  s.contribution = w.take<char>(contribution);
  s.gathered = w.take<char>(contribution * W);
  for (void** x : {&s.carry_h0, &s.carry_dht, &s.ht_acc, &s.dh0_acc})
    *x = w.take<char>(state_elems(p, Hg) * acc);
  s.state_out = w.take<char>(caller_state);
  s.workspace = w.take<char>(
      rank_workspace_bytes(p.dtype, p.path, backward, p.B, r.part.count, Hg, p.K, p.V));
}

// A rank's buffers (a null base only counts): each group's, and the staging of one
// process per rank in groups.
size_t carve_rank(const world_state& ws, bool backward, rank_state& r, char* base) {
  const call& p = ws.p;
  carver w{base};
  for (group_state& s : r.groups) carve_group(p, backward, ws.world, group_heads(ws), r, s, w);
  if (!ws.one_process && ws.groups > 1) {
    const int64_t most = (p.T + ws.world - 1) / ws.world;
    r.staging = w.take<char>(
        std::max(static_cast<size_t>(p.B) * most * group_heads(ws) * std::max(p.K, p.V) *
                     storage_bytes(p.dtype),
                 state_elems(p, group_heads(ws)) * std::max(state_bytes(p), acc_bytes(p.dtype))));
  }
  return w.used;
}

void free_world(world_state& w) {
  device_guard guard;
  for (rank_state& r : w.ranks) {
    cudaSetDevice(r.device);
    for (cudaStream_t s : {r.stream, r.exchange_stream})
      if (s) cudaStreamSynchronize(s);
    for (group_state& s : r.groups) {
      for (cudaEvent_t e : {s.contributed, s.gathered_in})
        if (e) cudaEventDestroy(e);
      for (cudaEvent_t e : s.phase)
        if (e) cudaEventDestroy(e);
    }
    if (r.done) cudaEventDestroy(r.done);
    for (cudaStream_t s : {r.stream, r.exchange_stream})
      if (s) cudaStreamDestroy(s);
    if (r.arena) cudaFree(r.arena);
  }
  if (w.entry) cudaEventDestroy(w.entry);
  w.ranks.clear();
}

// A group's tokens as a call (phase 1 and 2 share it; states in the accumulator type, the
// carried ones set by the caller).
call group_call(const world_state& w, const rank_state& r, const group_state& s) {
  const call& p = w.p;
  call c{};
  c.dtype = p.dtype, c.path = p.path;
  c.B = p.B, c.H = group_heads(w), c.K = p.K, c.V = p.V, c.T = r.part.count;
  c.scale = p.scale;
  c.state_fp32 = p.dtype == storage::bf16;
  c.fp32_walk_cols = p.fp32_walk_cols;
  c.sequence_rank = true;
  c.q = s.q, c.k = s.k, c.v = s.v, c.g = s.g, c.d_o = s.d_o;
  c.o = s.o, c.dq = s.dq, c.dk = s.dk, c.dv = s.dv, c.dg = s.dg;
  c.workspace = s.workspace;
  c.stream = r.stream;
  return c;
}

status check_prepared(const call& p, bool backward) {
  if (!state) return "no prepared ranks: prepare() first";
  if (!same_problem(state->p, p)) return "the call's problem is not the one prepared";
  if (backward && !state->backward) return "prepared for forward only";
  const group_state& s = state->ranks.front().groups.front();
  if ((p.h0 != nullptr) != (s.h0 != nullptr) ||
      (backward && (p.dht != nullptr) != (s.dht != nullptr)))
    return "the call's h0 or dht is not the one prepared";
  return {};
}

// On r's exchange stream, after group g's contribution: the contributions it needs
// in s.gathered (slot q: rank q's). One process, the ranks before it (forward) or every
// other (backward), copied once each is made; one process per rank, every rank's, gathered
// by NCCL.
status exchange(world_state& w, rank_state& r, int g, bool backward, size_t cbytes) {
  group_state& s = r.groups[g];
  const cudaStream_t x = r.exchange_stream;
  if (!w.one_process) return nccl::all_gather(s.contribution, s.gathered, cbytes, w.comm, x);
  for (const rank_state& from : w.ranks) {
    if (from.index == r.index || (!backward && from.index > r.index)) continue;
    GLABENCH_TRY_CUDA(cudaStreamWaitEvent(x, from.groups[g].contributed, 0), "cudaStreamWaitEvent");
    // cudaMemcpyAsync, not cudaMemcpyPeerAsync, which a CUDA graph cannot capture: with
    // unified addressing and peer access (prepare) it is the same copy-engine transfer.
    GLABENCH_TRY_CUDA(cudaMemcpyAsync(static_cast<char*>(s.gathered) + from.index * cbytes,
                                      from.groups[g].contribution, cbytes, cudaMemcpyDefault, x),
                      "a contribution to another rank");
  }
  return {};
}

// Group g's carried states and its walk, on r's stream (once its exchange is in).
status carried_walk(world_state& w, rank_state& r, int g, bool backward) {
  const call& p = w.p;
  group_state& s = r.groups[g];
  const int W = w.world, i = r.index, Hg = group_heads(w);
  call c = group_call(w, r, s);
  GLABENCH_TRY_CUDA(launch_carry(p.dtype, p.B, Hg, p.K, p.V, s.gathered, W, i, false, s.h0,
                                 p.state_fp32, s.carry_h0, r.stream),
                    "the carried state");
  c.h0 = s.carry_h0;
  if (backward) {
    GLABENCH_TRY_CUDA(launch_carry(p.dtype, p.B, Hg, p.K, p.V, s.gathered, W, i, true, s.dht,
                                   p.state_fp32, s.carry_dht, r.stream),
                      "the carried dS");
    c.dht = s.carry_dht;
    c.dh0 = i == 0 && p.dh0 ? s.dh0_acc : nullptr;
    GLABENCH_TRY_CUDA(launch_carried_backward(c), "a rank's backward");
  } else {
    c.ht = i == W - 1 && p.ht ? s.ht_acc : nullptr;
    GLABENCH_TRY_CUDA(launch_carried_forward(c), "a rank's forward");
  }
  return {};
}

// One call: phase 1 of every group on every rank, each group's exchange beside the later
// groups' work, the carry, phase 2 group by group. Every rank's stream forks from `stream`
// (rank 0's device) and joins it again at the end, also when a step fails, so that a CUDA
// graph capturing `stream` is never left with work unjoined (the exchange streams join
// their rank's stream through each group's gathered_in).
status run_ranks(world_state& w, const call& p, bool backward, bool timed) {
  const size_t cbytes = contribution_elems(p.B, group_heads(w), p.K, p.V) * acc_bytes(p.dtype);
  auto mark = [&](group_state& s, phase k, cudaStream_t stream) {
    return timed ? cudaEventRecord(s.phase[k], stream) : cudaSuccess;
  };
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    for (group_state& s : r.groups) {
      GLABENCH_TRY_CUDA(mark(s, contribution_start, r.stream), "cudaEventRecord");
      GLABENCH_TRY_CUDA(launch_contribution(group_call(w, r, s), backward, s.contribution),
                        "a rank's contribution");
      GLABENCH_TRY_CUDA(mark(s, contribution_end, r.stream), "cudaEventRecord");
      GLABENCH_TRY_CUDA(cudaEventRecord(s.contributed, r.stream), "cudaEventRecord");
    }
  }
  for (int g = 0; g < w.groups; ++g)
    for (rank_state& r : w.ranks) {
      GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
      group_state& s = r.groups[g];
      GLABENCH_TRY_CUDA(cudaStreamWaitEvent(r.exchange_stream, s.contributed, 0),
                        "cudaStreamWaitEvent");
      GLABENCH_TRY_CUDA(mark(s, exchange_start, r.exchange_stream), "cudaEventRecord");
      GLABENCH_TRY(exchange(w, r, g, backward, cbytes));
      GLABENCH_TRY_CUDA(mark(s, exchange_end, r.exchange_stream), "cudaEventRecord");
      GLABENCH_TRY_CUDA(cudaEventRecord(s.gathered_in, r.exchange_stream), "cudaEventRecord");
    }
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    for (int g = 0; g < w.groups; ++g) {
      group_state& s = r.groups[g];
      GLABENCH_TRY_CUDA(cudaStreamWaitEvent(r.stream, s.gathered_in, 0), "cudaStreamWaitEvent");
      GLABENCH_TRY_CUDA(mark(s, walk_start, r.stream), "cudaEventRecord");
      GLABENCH_TRY(carried_walk(w, r, g, backward));
      GLABENCH_TRY_CUDA(mark(s, walk_end, r.stream), "cudaEventRecord");
    }
  }
  return {};
}

status run(const call& p, bool backward) {
  GLABENCH_TRY(check_prepared(p, backward));
  const cudaStream_t stream = p.stream;
  world_state& w = *state;
  device_guard guard;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  GLABENCH_TRY_CUDA(cudaSetDevice(w.ranks[0].device), "cudaSetDevice");
  GLABENCH_TRY_CUDA(cudaStreamIsCapturing(stream, &capturing), "cudaStreamIsCapturing");
  GLABENCH_TRY_CUDA(cudaEventRecord(w.entry, stream), "cudaEventRecord");
  size_t forked = 0;
  status failed;
  for (; forked < w.ranks.size(); ++forked) {  // a rank that did not wait is not joined
    rank_state& r = w.ranks[forked];
    cudaError_t e = cudaSetDevice(r.device);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(r.stream, w.entry, 0);
    if (e != cudaSuccess) {
      failed = cuda_error(e, "a rank's stream after the caller's");
      break;
    }
  }
  w.timed = capturing == cudaStreamCaptureStatusNone;
  if (failed.empty()) failed = run_ranks(w, p, backward, w.timed);
  if (!failed.empty()) w.timed = false;
  // Join: the caller's stream waits for every forked rank. Each rank's stream has waited
  // for its exchange stream's last group before its last walk; after a failure it waits
  // for whatever the exchange stream holds, where that stream is in the same capture state
  // (best effort: the call failed already).
  for (size_t i = 0; i < forked; ++i) {
    rank_state& r = w.ranks[i];
    cudaError_t e = cudaSetDevice(r.device);
    cudaStreamCaptureStatus joined = cudaStreamCaptureStatusNone;
    if (e == cudaSuccess && !failed.empty() &&
        cudaStreamIsCapturing(r.exchange_stream, &joined) == cudaSuccess &&
        joined == capturing &&  // under capture, only a stream the capture reached
        cudaEventRecord(r.groups.back().gathered_in, r.exchange_stream) == cudaSuccess)
      cudaStreamWaitEvent(r.stream, r.groups.back().gathered_in, 0);
    if (e == cudaSuccess) e = cudaEventRecord(r.done, r.stream);
    if (e == cudaSuccess) e = cudaSetDevice(w.ranks[0].device);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(stream, r.done, 0);
    if (e != cudaSuccess && failed.empty())
      failed = cuda_error(e, "the caller's stream after a rank");
  }
  if (!failed.empty()) return failed;
  if (backward) {
    w.pending.dq = p.dq, w.pending.dk = p.dk, w.pending.dv = p.dv, w.pending.dg = p.dg;
    w.pending.dh0 = p.dh0;
  } else {
    w.pending.o = p.o, w.pending.ht = p.ht;
  }
  return {};
}

// The call's states: ht, held by the last rank, and dh0, by rank 0 (W ≥ 2: never both on
// one rank); each its holder's accumulator and the caller's tensor (null where absent).
struct held_state {
  int holder;
  void *acc, *caller;
};
std::array<held_state, 2> states_of(int W, const group_state& s, const call& out) {
  return {{{W - 1, s.ht_acc, out.ht}, {0, s.dh0_acc, out.dh0}}};
}

// A group's state (accumulator type) into s.state_out, in the caller's state dtype.
status state_for_caller(const world_state& w, const rank_state& r, group_state& s,
                        const void* acc) {
  const call& p = w.p;
  GLABENCH_TRY_CUDA(launch_state_from_acc(p.dtype, state_elems(p, group_heads(w)), acc,
                                          p.state_fp32, s.state_out, r.stream),
                    "a state into the caller's dtype");
  return {};
}

// One process per rank: every rank's rows of the outputs, and the call's states, into
// every process's tensors, each rank broadcasting its own (its stream). One group: straight
// into the caller's tensors, in one NCCL group.
status broadcast_whole(world_state& w, rank_state& r) {
  const call& p = w.p;
  const call& out = w.pending;
  group_state& s = r.groups.front();
  for (const held_state& x : states_of(w.world, s, out))
    if (x.caller && r.index == x.holder) GLABENCH_TRY(state_for_caller(w, r, s, x.acc));
  GLABENCH_TRY(nccl::group_start());
  status failed;
  for (int q = 0; q < w.world && failed.empty(); ++q) {  // rank q's rows, from rank q
    const token_part part = part_of(p.T, w.world, q);
    for (const output_rows& t : outputs_of(p, s, out)) {
      if (!t.caller || !t.group_side) continue;
      for (int b = 0; b < p.B && failed.empty(); ++b) {
        const strided_block x = token_block(p, part, 1, 0, t.D, b);  // width = pitch
        failed = nccl::broadcast(static_cast<char*>(t.group_side) + b * x.width * x.rows,
                                 static_cast<char*>(t.caller) + x.caller_at, x.width * x.rows, q,
                                 w.comm, r.stream);
      }
    }
  }
  for (const held_state& x : states_of(w.world, s, out))
    if (x.caller && failed.empty())
      failed = nccl::broadcast(s.state_out, x.caller, state_elems(p, p.H) * state_bytes(p),
                               x.holder, w.comm, r.stream);
  GLABENCH_TRY(nccl::group_end());
  return failed;
}

// The same in groups: each group's rows through the staging buffer to their place among the
// caller's heads, a broadcast and a copy at a time.
status broadcast_grouped(world_state& w, rank_state& r) {
  const call& p = w.p;
  const call& out = w.pending;
  for (int g = 0; g < w.groups; ++g) {
    group_state& s = r.groups[g];
    for (int q = 0; q < w.world; ++q) {  // rank q's rows, from rank q
      const token_part part = part_of(p.T, w.world, q);
      for (const output_rows& t : outputs_of(p, s, out)) {
        if (!t.caller || !t.group_side) continue;
        const size_t bytes =
            static_cast<size_t>(p.B) * part.count * group_heads(w) * t.D * storage_bytes(p.dtype);
        GLABENCH_TRY(nccl::broadcast(t.group_side, r.staging, bytes, q, w.comm, r.stream));
        for (int b = 0; b < p.B; ++b) {
          const strided_block x = token_block(p, part, w.groups, g, t.D, b);
          GLABENCH_TRY_CUDA(
              copy_block(x, r.staging, b * x.width * x.rows, t.caller, false, r.stream),
              "a rank's broadcast rows to the caller");
        }
      }
    }
    for (const held_state& x : states_of(w.world, s, out)) {
      if (!x.caller) continue;
      if (r.index == x.holder) GLABENCH_TRY(state_for_caller(w, r, s, x.acc));
      GLABENCH_TRY(nccl::broadcast(s.state_out, r.staging,
                                   state_elems(p, group_heads(w)) * state_bytes(p), x.holder,
                                   w.comm, r.stream));
      GLABENCH_TRY_CUDA(copy_block(state_block(p, w.groups, g, state_bytes(p)), r.staging, 0,
                                   x.caller, false, r.stream),
                        "a state to the caller");
    }
  }
  return {};
}

}  // namespace

placement one_process(const std::vector<int>& devices, int per_device, int head_groups) {
  placement where;
  for (int d : devices)
    for (int i = 0; i < per_device; ++i) where.devices.push_back(d);
  where.world = static_cast<int>(where.devices.size());
  where.head_groups = head_groups;
  return where;
}

status prepare(const call& p, bool backward, const placement& where) {
  std::lock_guard<std::mutex> lock(state_lock);
  if (state) free_world(*state);
  state.reset();
  const int W = where.world, local = static_cast<int>(where.devices.size());
  if (W < 1 || p.T < W) return "at least one token a rank";
  if (local < 1 || where.first_rank < 0 || where.first_rank + local > W)
    return "this process's ranks are not in the world";
  if (where.head_groups < 1 || p.H % where.head_groups != 0)
    return "the heads (" + std::to_string(p.H) + ") are not a multiple of the head groups (" +
           std::to_string(where.head_groups) + ")";
  device_guard guard;
  world_state w;
  w.p = p;
  w.backward = backward;
  w.world = W;
  w.groups = where.head_groups;
  w.one_process = local == W;
  if (!w.one_process) {
    if (!where.process) return "one process per rank needs its NCCL ranks";
    GLABENCH_TRY(nccl::process_communicator(*where.process, where.devices[0], &w.comm));
  }
  w.ranks.resize(local);
  // The copy engines reach every device directly where they can.
  for (int a : where.devices)
    for (int b : where.devices) {
      int can = 0;
      if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) continue;
      if (cudaError_t e = cudaSetDevice(a)) return cuda_error(e, "cudaSetDevice");
      if (cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
          e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
        return cuda_error(e, "cudaDeviceEnablePeerAccess");
      cudaGetLastError();
    }
  auto fail = [&](const status& s) {
    free_world(w);
    return s;
  };
  for (int i = 0; i < local; ++i) {
    rank_state& r = w.ranks[i];
    r.index = where.first_rank + i;
    r.device = where.devices[i];
    r.part = part_of(p.T, W, r.index);
    r.groups.resize(w.groups);
    if (cudaError_t e = cudaSetDevice(r.device)) return fail(cuda_error(e, "cudaSetDevice"));
    for (cudaStream_t* s : {&r.stream, &r.exchange_stream})
      if (cudaError_t e = cudaStreamCreateWithFlags(s, cudaStreamNonBlocking))
        return fail(cuda_error(e, "cudaStreamCreate"));
    if (cudaError_t e = cudaEventCreateWithFlags(&r.done, cudaEventDisableTiming))
      return fail(cuda_error(e, "cudaEventCreate"));
    for (int g = 0; g < w.groups; ++g) {
      group_state& s = r.groups[g];
      s.index = g;
      for (cudaEvent_t* e : {&s.contributed, &s.gathered_in})
        if (cudaError_t x = cudaEventCreateWithFlags(e, cudaEventDisableTiming))
          return fail(cuda_error(x, "cudaEventCreate"));
      for (cudaEvent_t& e : s.phase)
        if (cudaError_t x = cudaEventCreate(&e)) return fail(cuda_error(x, "cudaEventCreate"));
    }
    const size_t bytes = carve_rank(w, backward, r, nullptr);
    if (cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&r.arena), bytes))
      return fail(cuda_error(e, "cudaMalloc (a rank's buffers)"));
    carve_rank(w, backward, r, r.arena);
    for (group_state& s : r.groups) {
      const int g = s.index;
      for (auto [mine, theirs, D] :
           {std::tuple{s.q, p.q, p.K}, std::tuple{s.k, p.k, p.K}, std::tuple{s.g, p.g, p.K},
            std::tuple{s.v, p.v, p.V}, std::tuple{s.d_o, backward ? p.d_o : nullptr, p.V}})
        if (theirs)
          if (status e = copy_rows(w, r, g, D, mine, const_cast<void*>(theirs), true, r.stream);
              !e.empty())
            return fail(e);
      for (auto [mine, theirs] : {std::pair{s.h0, p.h0}, std::pair{s.dht, p.dht}})
        if (mine)
          if (cudaError_t e = copy_block(state_block(p, w.groups, g, state_bytes(p)), mine, 0,
                                         const_cast<void*>(theirs), true, r.stream))
            return fail(cuda_error(e, "copy a state to a rank"));
    }
  }
  if (cudaError_t e = cudaSetDevice(w.ranks[0].device)) return fail(cuda_error(e, "cudaSetDevice"));
  if (cudaError_t e = cudaEventCreateWithFlags(&w.entry, cudaEventDisableTiming))
    return fail(cuda_error(e, "cudaEventCreate"));
  for (rank_state& r : w.ranks)
    if (cudaError_t e = cudaStreamSynchronize(r.stream))
      return fail(cuda_error(e, "prepare's copies"));
  state = std::move(w);
  return {};
}

status forward(const call& p) {
  std::lock_guard<std::mutex> lock(state_lock);
  return run(p, false);
}

status backward(const call& p) {
  std::lock_guard<std::mutex> lock(state_lock);
  return run(p, true);
}

status collect() {
  std::lock_guard<std::mutex> lock(state_lock);
  if (!state) return {};
  world_state& w = *state;
  const call& p = w.p;
  const call& out = w.pending;
  device_guard guard;
  const int W = w.world;
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    if (!w.one_process) {
      GLABENCH_TRY(w.groups == 1 ? broadcast_whole(w, r) : broadcast_grouped(w, r));
      continue;
    }
    for (group_state& s : r.groups) {
      for (const output_rows& t : outputs_of(p, s, out))
        if (t.caller && t.group_side)
          GLABENCH_TRY(copy_rows(w, r, s.index, t.D, t.group_side, t.caller, false, r.stream));
      for (const held_state& x : states_of(W, s, out))
        if (x.caller && r.index == x.holder) {
          GLABENCH_TRY(state_for_caller(w, r, s, x.acc));
          GLABENCH_TRY_CUDA(copy_block(state_block(p, w.groups, s.index, state_bytes(p)),
                                       s.state_out, 0, x.caller, false, r.stream),
                            "a state to the caller");
        }
    }
  }
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(cudaStreamSynchronize(r.stream), "collect");
  }
  w.pending = {};
  return {};
}

// Per rank: its groups' contributions, exchanges and carried walks summed, and the time its
// stream waited for an exchange (exposed: from the later of its last contribution and the
// walk before to the walk's start), so the exchange hidden is 1 − exposed / exchange.
status last_call_json(std::string* text) {
  std::lock_guard<std::mutex> lock(state_lock);
  text->clear();
  if (!state || !state->timed) return {};
  device_guard guard;
  std::string lists[5];
  for (const rank_state& r : state->ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(cudaEventSynchronize(r.groups.back().phase[walk_end]),
                      "cudaEventSynchronize");
    double sums[5] = {};  // contribution, exchange, carried walk, exposed
    for (size_t g = 0; g < r.groups.size(); ++g) {
      const group_state& s = r.groups[g];
      // The stream's work just before this group's walk: the last contribution, or the
      // walk before.
      const cudaEvent_t before =
          g == 0 ? r.groups.back().phase[contribution_end] : r.groups[g - 1].phase[walk_end];
      const std::pair<cudaEvent_t, cudaEvent_t> spans[4] = {
          {s.phase[contribution_start], s.phase[contribution_end]},
          {s.phase[exchange_start], s.phase[exchange_end]},
          {s.phase[walk_start], s.phase[walk_end]},
          {before, s.phase[walk_start]}};
      float ms[4];  // contribution, exchange, carried walk, exposed
      for (int k = 0; k < 4; ++k)
        GLABENCH_TRY_CUDA(cudaEventElapsedTime(&ms[k], spans[k].first, spans[k].second),
                          "cudaEventElapsedTime");
      sums[0] += ms[0], sums[1] += ms[1], sums[2] += ms[2], sums[3] += std::max(0.f, ms[3]);
    }
    sums[4] = sums[1] > 0 ? 1.0 - std::min(1.0, sums[3] / sums[1]) : 1.0;
    for (int k = 0; k < 5; ++k) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.4f", lists[k].empty() ? "" : ",", sums[k]);
      lists[k] += buf;
    }
  }
  const world_state& w = *state;
  *text = "{\"ranks\":" + std::to_string(w.world) + ",\"processes\":\"" +
          (w.one_process ? "one" : "one per rank") +
          "\",\"first_rank\":" + std::to_string(w.ranks.front().index) +
          ",\"head_groups\":" + std::to_string(w.groups) +
          (w.one_process ? "" : ",\"nccl_version\":" + std::to_string(nccl::library_version())) +
          ",\"contribution_ms\":[" + lists[0] + "],\"exchange_ms\":[" + lists[1] +
          "],\"carried_ms\":[" + lists[2] + "],\"exposed_ms\":[" + lists[3] +
          "],\"hidden_fraction\":[" + lists[4] + "]}";
  return {};
}

void release() {
  std::lock_guard<std::mutex> lock(state_lock);
  if (state) free_world(*state);
  state.reset();
}

}  // namespace glabench::chunked::sequence
