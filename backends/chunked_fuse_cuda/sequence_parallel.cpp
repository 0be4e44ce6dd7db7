// Sequence-parallel gla across ranks (sequence_parallel.hpp).
#include "sequence_parallel.hpp"

#include <array>
#include <cstdio>
#include <mutex>
#include <optional>
#include <utility>

#include "../common/device_guard.hpp"
#include "../common/workspace_carver.hpp"

namespace glabench::chunked::sequence {
namespace {

using cuda_plugin::carver;
using cuda_plugin::cuda_error;
using cuda_plugin::device_guard;
namespace nccl = cuda_plugin::nccl;

struct rank_state {
  int index = 0, device = 0;  // its rank in the world
  token_part part{};
  cudaStream_t stream = nullptr;
  // The order between ranks: its contribution made, its call done.
  cudaEvent_t contributed = nullptr, done = nullptr;
  // The last call's phases, timed where it was not captured in a CUDA graph: started,
  // contribution made, contributions gathered, done.
  cudaEvent_t phase[4] = {};
  char* arena = nullptr;
  // Its tokens ([B, part.count, H, D]).
  void *q = nullptr, *k = nullptr, *v = nullptr, *g = nullptr, *o = nullptr;
  void *d_o = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr, *dg = nullptr;
  // The caller's h0 and dht (state dtype; null when absent); its own contribution and the
  // gathered ones (accumulator type); the carried states and its ht / dh0 (accumulator
  // type), and a state in the caller's dtype for collect.
  void *h0 = nullptr, *dht = nullptr, *contribution = nullptr, *gathered = nullptr;
  void *carry_h0 = nullptr, *carry_dht = nullptr, *ht_acc = nullptr, *dh0_acc = nullptr;
  void *state_out = nullptr, *workspace = nullptr;
};

struct world_state {
  call p{};                              // the whole problem as prepared
  bool backward = false, timed = false;  // timed: the last call's phases were recorded
  int world = 1;
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

size_t state_elems(const call& p) {
  return static_cast<size_t>(p.B) * p.H * p.K * p.V;
}
size_t caller_state_bytes(const call& p) {
  return state_elems(p) * (p.state_fp32 ? 4 : storage_bytes(p.dtype));
}

// Batch row b of a part's tokens in a [B,T,H,D] tensor: where it lies in the caller's
// tensor and in the part's own [B,count,H,D] one, and its bytes. Moved one batch row at a
// time (a 2D copy's pitch, a whole row of T tokens, passes the device's limit of 2³¹
// bytes at long sequences).
struct row_block {
  size_t caller_at, rank_at, bytes;
};
row_block block_of(const call& p, token_part part, int D, int b) {
  const size_t token = static_cast<size_t>(p.H) * D * storage_bytes(p.dtype);
  const size_t bytes = token * part.count;
  return {b * token * p.T + token * part.first, b * bytes, bytes};
}

// A rank's rows of a token tensor between the caller's tensor and its own.
status copy_rows(const call& p, const rank_state& r, int D, void* rank_side,
                 const void* caller_side, void* caller_out, bool to_rank) {
  for (int b = 0; b < p.B; ++b) {
    const row_block x = block_of(p, r.part, D, b);
    cudaError_t e = to_rank ? cudaMemcpyAsync(static_cast<char*>(rank_side) + x.rank_at,
                                              static_cast<const char*>(caller_side) + x.caller_at,
                                              x.bytes, cudaMemcpyDefault, r.stream)
                            : cudaMemcpyAsync(static_cast<char*>(caller_out) + x.caller_at,
                                              static_cast<const char*>(rank_side) + x.rank_at,
                                              x.bytes, cudaMemcpyDefault, r.stream);
    if (e) return cuda_error(e, to_rank ? "scatter a rank's tokens" : "gather a rank's outputs");
  }
  return {};
}

// The call's token outputs: each one's width, the rank's buffer and the caller's tensor
// (null where the call has none).
struct output_rows {
  int D;
  void *rank_side, *caller;
};
std::array<output_rows, 5> outputs_of(const call& p, const rank_state& r, const call& out) {
  return {{{p.V, r.o, out.o},
           {p.K, r.dq, out.dq},
           {p.K, r.dk, out.dk},
           {p.V, r.dv, out.dv},
           {p.K, r.dg, out.dg}}};
}

// A rank's buffers, carved from its arena (a null base only counts).
size_t carve_rank(const call& p, bool backward, int W, rank_state& r, char* base) {
  carver w{base};
  const size_t tok = static_cast<size_t>(p.B) * r.part.count * p.H * storage_bytes(p.dtype);
  const size_t tk = tok * p.K, tv = tok * p.V, acc = acc_bytes(p.dtype);
  const size_t contribution = contribution_elems(p.B, p.H, p.K, p.V) * acc;
  r.q = w.take<char>(tk), r.k = w.take<char>(tk), r.g = w.take<char>(tk);
  r.v = w.take<char>(tv), r.o = w.take<char>(tv);
  if (backward) {
    r.d_o = w.take<char>(tv), r.dv = w.take<char>(tv);
    r.dq = w.take<char>(tk), r.dk = w.take<char>(tk), r.dg = w.take<char>(tk);
  }
  r.h0 = p.h0 ? w.take<char>(caller_state_bytes(p)) : nullptr;
  r.dht = backward && p.dht ? w.take<char>(caller_state_bytes(p)) : nullptr;
  r.contribution = w.take<char>(contribution);
  r.gathered = w.take<char>(contribution * W);
  for (void** s : {&r.carry_h0, &r.carry_dht, &r.ht_acc, &r.dh0_acc})
    *s = w.take<char>(state_elems(p) * acc);
  r.state_out = w.take<char>(caller_state_bytes(p));
  r.workspace = w.take<char>(
      rank_workspace_bytes(p.dtype, p.path, backward, p.B, r.part.count, p.H, p.K, p.V));
  return w.used;
}

void free_world(world_state& w) {
  device_guard guard;
  for (rank_state& r : w.ranks) {
    cudaSetDevice(r.device);
    if (r.stream) cudaStreamSynchronize(r.stream);
    for (cudaEvent_t e : {r.contributed, r.done, r.phase[0], r.phase[1], r.phase[2], r.phase[3]})
      if (e) cudaEventDestroy(e);
    if (r.stream) cudaStreamDestroy(r.stream);
    if (r.arena) cudaFree(r.arena);
  }
  if (w.entry) cudaEventDestroy(w.entry);
  w.ranks.clear();
}

// Rank r's tokens as a call (phase 1 and 2 share it; states in the accumulator type, the
// carried ones set by the caller).
call rank_call(const call& p, const rank_state& r) {
  call c{};
  c.dtype = p.dtype, c.path = p.path;
  c.B = p.B, c.H = p.H, c.K = p.K, c.V = p.V, c.T = r.part.count;
  c.scale = p.scale;
  c.state_fp32 = p.dtype == storage::bf16;
  c.sequence_rank = true;
  c.q = r.q, c.k = r.k, c.v = r.v, c.g = r.g, c.d_o = r.d_o;
  c.o = r.o, c.dq = r.dq, c.dk = r.dk, c.dv = r.dv, c.dg = r.dg;
  c.workspace = r.workspace;
  c.stream = r.stream;
  return c;
}

status check_prepared(const call& p, bool backward) {
  if (!state) return "no prepared ranks: prepare() first";
  if (!same_problem(state->p, p)) return "the call's problem is not the one prepared";
  if (backward && !state->backward) return "prepared for forward only";
  const rank_state& r = state->ranks.front();
  if ((p.h0 != nullptr) != (r.h0 != nullptr) ||
      (backward && (p.dht != nullptr) != (r.dht != nullptr)))
    return "the call's h0 or dht is not the one prepared";
  return {};
}

// The contributions rank r needs in r.gathered (slot q: rank q's): one process, the ranks
// before it (forward) or every other (backward), copied once each is made; one process
// per rank, every rank's, gathered by NCCL.
status exchange(world_state& w, rank_state& r, bool backward, size_t cbytes) {
  if (!w.one_process) return nccl::all_gather(r.contribution, r.gathered, cbytes, w.comm, r.stream);
  for (const rank_state& from : w.ranks) {
    if (from.index == r.index || (!backward && from.index > r.index)) continue;
    GLABENCH_TRY_CUDA(cudaStreamWaitEvent(r.stream, from.contributed, 0), "cudaStreamWaitEvent");
    // cudaMemcpyAsync, not cudaMemcpyPeerAsync, which a CUDA graph cannot capture: with
    // unified addressing and peer access (prepare) it is the same copy-engine transfer.
    GLABENCH_TRY_CUDA(cudaMemcpyAsync(static_cast<char*>(r.gathered) + from.index * cbytes,
                                      from.contribution, cbytes, cudaMemcpyDefault, r.stream),
                      "a contribution to another rank");
  }
  return {};
}

// One call: phase 1 on every rank, the exchange, the carry, phase 2. Every rank's stream
// forks from `stream` (rank 0's device) and joins it again at the end, also when a step
// fails, so that a CUDA graph capturing `stream` is never left with work unjoined.
status run_ranks(world_state& w, const call& p, bool backward, bool timed) {
  const int W = w.world;
  const size_t cbytes = contribution_elems(p.B, p.H, p.K, p.V) * acc_bytes(p.dtype);
  auto mark = [&](rank_state& r, int k) {
    return timed ? cudaEventRecord(r.phase[k], r.stream) : cudaSuccess;
  };
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(mark(r, 0), "cudaEventRecord");
    GLABENCH_TRY_CUDA(launch_contribution(rank_call(p, r), backward, r.contribution),
                      "a rank's contribution");
    GLABENCH_TRY_CUDA(mark(r, 1), "cudaEventRecord");
    GLABENCH_TRY_CUDA(cudaEventRecord(r.contributed, r.stream), "cudaEventRecord");
  }
  for (rank_state& r : w.ranks) {
    const int i = r.index;
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY(exchange(w, r, backward, cbytes));
    GLABENCH_TRY_CUDA(mark(r, 2), "cudaEventRecord");
    call c = rank_call(p, r);
    GLABENCH_TRY_CUDA(launch_carry(p.dtype, p.B, p.H, p.K, p.V, r.gathered, W, i, false, r.h0,
                                   p.state_fp32, r.carry_h0, r.stream),
                      "the carried state");
    c.h0 = r.carry_h0;
    if (backward) {
      GLABENCH_TRY_CUDA(launch_carry(p.dtype, p.B, p.H, p.K, p.V, r.gathered, W, i, true, r.dht,
                                     p.state_fp32, r.carry_dht, r.stream),
                        "the carried dS");
      c.dht = r.carry_dht;
      c.dh0 = i == 0 && p.dh0 ? r.dh0_acc : nullptr;
      GLABENCH_TRY_CUDA(launch_carried_backward(c), "a rank's backward");
    } else {
      c.ht = i == W - 1 && p.ht ? r.ht_acc : nullptr;
      GLABENCH_TRY_CUDA(launch_carried_forward(c), "a rank's forward");
    }
    GLABENCH_TRY_CUDA(mark(r, 3), "cudaEventRecord");
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
  // Join: the caller's stream waits for every forked rank.
  for (size_t i = 0; i < forked; ++i) {
    rank_state& r = w.ranks[i];
    cudaError_t e = cudaSetDevice(r.device);
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
std::array<held_state, 2> states_of(int W, const rank_state& r, const call& out) {
  return {{{W - 1, r.ht_acc, out.ht}, {0, r.dh0_acc, out.dh0}}};
}

// A state r holds (accumulator type) into r.state_out, in the caller's state dtype.
status state_for_caller(const call& p, rank_state& r, const void* acc) {
  GLABENCH_TRY_CUDA(
      launch_state_from_acc(p.dtype, state_elems(p), acc, p.state_fp32, r.state_out, r.stream),
      "a state into the caller's dtype");
  return {};
}

// One process per rank: every rank's rows of the outputs, and the call's states, into
// every process's tensors, each rank broadcasting its own (its stream; one NCCL group).
status broadcast_outputs(world_state& w, rank_state& r) {
  const call& p = w.p;
  const call& out = w.pending;
  for (const held_state& x : states_of(w.world, r, out))
    if (x.caller && r.index == x.holder) GLABENCH_TRY(state_for_caller(p, r, x.acc));
  GLABENCH_TRY(nccl::group_start());
  status failed;
  for (int q = 0; q < w.world && failed.empty(); ++q)  // rank q's rows, from rank q
    for (const output_rows& t : outputs_of(p, r, out)) {
      if (!t.caller || !t.rank_side) continue;
      for (int b = 0; b < p.B && failed.empty(); ++b) {
        const row_block x = block_of(p, part_of(p.T, w.world, q), t.D, b);
        failed = nccl::broadcast(static_cast<char*>(t.rank_side) + x.rank_at,
                                 static_cast<char*>(t.caller) + x.caller_at, x.bytes, q, w.comm,
                                 r.stream);
      }
    }
  for (const held_state& x : states_of(w.world, r, out))
    if (x.caller && failed.empty())
      failed =
          nccl::broadcast(r.state_out, x.caller, caller_state_bytes(p), x.holder, w.comm, r.stream);
  GLABENCH_TRY(nccl::group_end());
  return failed;
}

}  // namespace

placement one_process(const std::vector<int>& devices, int per_device) {
  placement where;
  for (int d : devices)
    for (int i = 0; i < per_device; ++i) where.devices.push_back(d);
  where.world = static_cast<int>(where.devices.size());
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
  device_guard guard;
  world_state w;
  w.p = p;
  w.backward = backward;
  w.world = W;
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
      cudaSetDevice(a);
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
    if (cudaError_t e = cudaSetDevice(r.device)) return fail(cuda_error(e, "cudaSetDevice"));
    if (cudaError_t e = cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking))
      return fail(cuda_error(e, "cudaStreamCreate"));
    for (cudaEvent_t* e : {&r.contributed, &r.done})
      if (cudaError_t x = cudaEventCreateWithFlags(e, cudaEventDisableTiming))
        return fail(cuda_error(x, "cudaEventCreate"));
    for (cudaEvent_t& e : r.phase)
      if (cudaError_t x = cudaEventCreate(&e)) return fail(cuda_error(x, "cudaEventCreate"));
    const size_t bytes = carve_rank(p, backward, W, r, nullptr);
    if (cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&r.arena), bytes))
      return fail(cuda_error(e, "cudaMalloc (a rank's buffers)"));
    carve_rank(p, backward, W, r, r.arena);
    if (status s = copy_rows(p, r, p.K, r.q, p.q, nullptr, true); !s.empty()) return fail(s);
    if (status s = copy_rows(p, r, p.K, r.k, p.k, nullptr, true); !s.empty()) return fail(s);
    if (status s = copy_rows(p, r, p.K, r.g, p.g, nullptr, true); !s.empty()) return fail(s);
    if (status s = copy_rows(p, r, p.V, r.v, p.v, nullptr, true); !s.empty()) return fail(s);
    if (backward)
      if (status s = copy_rows(p, r, p.V, r.d_o, p.d_o, nullptr, true); !s.empty()) return fail(s);
    for (auto [to, from] : {std::pair{r.h0, p.h0}, std::pair{r.dht, p.dht}})
      if (to)
        if (cudaError_t e =
                cudaMemcpyAsync(to, from, caller_state_bytes(p), cudaMemcpyDefault, r.stream))
          return fail(cuda_error(e, "copy a state to a rank"));
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
      GLABENCH_TRY(broadcast_outputs(w, r));
      continue;
    }
    for (const output_rows& t : outputs_of(p, r, out))
      if (t.caller && t.rank_side)
        GLABENCH_TRY(copy_rows(p, r, t.D, t.rank_side, nullptr, t.caller, false));
    for (const held_state& x : states_of(W, r, out))
      if (x.caller && r.index == x.holder) {
        GLABENCH_TRY(state_for_caller(p, r, x.acc));
        GLABENCH_TRY_CUDA(cudaMemcpyAsync(x.caller, r.state_out, caller_state_bytes(p),
                                          cudaMemcpyDefault, r.stream),
                          "a state to the caller");
      }
  }
  for (rank_state& r : w.ranks) {
    GLABENCH_TRY_CUDA(cudaSetDevice(r.device), "cudaSetDevice");
    GLABENCH_TRY_CUDA(cudaStreamSynchronize(r.stream), "collect");
  }
  w.pending = {};
  return {};
}

std::string last_call_json() {
  std::lock_guard<std::mutex> lock(state_lock);
  if (!state || !state->timed) return {};
  device_guard guard;
  std::string phases[3];
  for (const rank_state& r : state->ranks) {
    cudaSetDevice(r.device);
    if (cudaEventSynchronize(r.phase[3]) != cudaSuccess) return {};
    for (int k = 0; k < 3; ++k) {
      float ms = 0.f;
      if (cudaEventElapsedTime(&ms, r.phase[k], r.phase[k + 1]) != cudaSuccess) return {};
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.4f", phases[k].empty() ? "" : ",", ms);
      phases[k] += buf;
    }
  }
  const world_state& w = *state;
  return "{\"ranks\":" + std::to_string(w.world) + ",\"processes\":\"" +
         (w.one_process ? "one" : "one per rank") +
         "\",\"first_rank\":" + std::to_string(w.ranks.front().index) +
         (w.one_process ? "" : ",\"nccl_version\":" + std::to_string(nccl::library_version())) +
         ",\"contribution_ms\":[" + phases[0] + "],\"exchange_ms\":[" + phases[1] +
         "],\"carried_ms\":[" + phases[2] + "]}";
}

void release() {
  std::lock_guard<std::mutex> lock(state_lock);
  if (state) free_world(*state);
  state.reset();
}

}  // namespace glabench::chunked::sequence
