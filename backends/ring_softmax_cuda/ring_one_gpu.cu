// The ring's schedule on one device (RING_SOFTMAX_CUDA_SHARDS = N): every pair of
// ring_schedule() in order, each block folded into its rows' running result as it
// arrives, exactly as a rank would fold the blocks the ring brings it. With N = 1 the
// one pair writes o and lse directly.
#include <cuda_bf16.h>

#include <utility>
#include <vector>

#include "../common/workspace_carver.hpp"
#include "pair_steps.hpp"

namespace glabench::ring {
namespace {

// A packed batch on cuDNN's blocks: a block a sequence. Before its offsets are known
// (workspace_size), the whole row as one sequence: the largest block, whose graph's
// workspace bounds every sequence's (prepare() checks it).
bool packed_on_cudnn(const problem& p) {
  return p.num_seqs > 0 && p.block == block_kernel::cudnn;
}
// The problem a pair's block runs as: p, or on the own kernel for a packed batch's
// one-token sequence, which cuDNN refuses.
problem block_problem(const problem& p, const block_pair& bp) {
  problem out = p;
  if (packed_on_cudnn(p) && one_token_sequence(p, bp)) out.block = block_kernel::own;
  return out;
}

std::vector<block_pair> plan_of(const problem& p) {
  if (packed_on_cudnn(p))
    return packed_schedule(p.offsets ? *p.offsets : std::vector<int64_t>{0, p.T}, p.causal);
  return ring_schedule(p.T, p.shards, p.chunking, p.causal);
}

// ---- forward -------------------------------------------------------------------------

// The running results live in accumulators only where some rows have more than one pair;
// a pair alone for its rows (N = 1, ring; a packed batch's sequence) writes the outputs
// directly.
bool needs_accumulators(const pair_visits& v) {
  for (size_t i = 0; i < v.of_q.size(); ++i)
    if (!v.of_q[i].first || !v.of_q[i].last || !v.of_kv[i].first || !v.of_kv[i].last) return true;
  return false;
}

template <typename T>
struct forward_space {
  acc_t<T>* acc_o;
  acc_t<T>* acc_lse;
  T* block_o;             // cuDNN: a block's output
  float* block_stats;     // cuDNN: a block's lse
  void* cudnn_workspace;  // cuDNN: the rest of the workspace
};

// The workspace in order; cuDNN's own workspace is what follows (`used` excludes it).
template <typename T>
forward_space<T> carve_forward(const problem& p, bool accumulate, char* base, size_t* used) {
  cuda_plugin::carver c{base};
  const size_t tokens = size_t(p.B) * p.T * p.H, stats = size_t(p.B) * p.H * p.T;
  forward_space<T> s{};
  if (accumulate) {
    s.acc_o = c.take<acc_t<T>>(tokens * p.V);
    s.acc_lse = c.take<acc_t<T>>(stats);
    if (p.block == block_kernel::cudnn) {
      s.block_o = c.take<T>(tokens * p.V);
      s.block_stats = c.take<float>(stats);
    }
  }
  s.cudnn_workspace = base ? base + c.used : nullptr;
  *used = c.used;
  return s;
}

template <typename T>
status forward_typed(const problem& p, const forward_io& io) {
  using A = acc_t<T>;
  if (packed_on_cudnn(p) && !p.offsets) return "a packed batch on cuDNN needs its offsets";
  const std::vector<block_pair> plan = plan_of(p);
  const pair_visits when = visits_of(plan);
  size_t used = 0;
  const forward_space<T> ws =
      carve_forward<T>(p, needs_accumulators(when), static_cast<char*>(io.workspace), &used);
  if (used > io.workspace_bytes) return "workspace smaller than forward_workspace_bytes";
  const T* q = static_cast<const T*>(io.q);
  const T* k = static_cast<const T*>(io.k);
  const T* v = static_cast<const T*>(io.v);
  T* o = static_cast<T*>(io.o);
  A* lse = static_cast<A*>(io.lse);
  forward_tensors<T> x{q, k,   v,          ws.acc_o,       ws.acc_lse,
                       o, lse, ws.block_o, ws.block_stats, ws.cudnn_workspace};
  x.cu_seqlens = io.cu_seqlens;
  for (size_t i = 0; i < plan.size(); ++i) {
    const visit w = when.of_q[i];
    GLABENCH_TRY(
        forward_pair<T>(block_problem(p, plan[i]), plan[i], w, w.first && w.last, x, io.stream));
  }
  return {};
}

// ---- backward ------------------------------------------------------------------------

template <typename T>
struct backward_space {
  acc_t<T>* row_dots;
  acc_t<T>*acc_dq, *acc_dk, *acc_dv;
  T *block_dq, *block_dk, *block_dv;  // cuDNN: a block's gradients
  float* packed_lse;                  // cuDNN: the query chunk's rows of lse, packed
  void* cudnn_workspace;              // cuDNN: the rest of the workspace
};

template <typename T>
backward_space<T> carve_backward(const problem& p, bool accumulate, char* base, size_t* used) {
  cuda_plugin::carver c{base};
  const size_t tokens = size_t(p.B) * p.T * p.H, stats = size_t(p.B) * p.H * p.T;
  backward_space<T> s{};
  if (p.block == block_kernel::own || packed_on_cudnn(p)) s.row_dots = c.take<acc_t<T>>(stats);
  if (accumulate) {
    s.acc_dq = c.take<acc_t<T>>(tokens * p.D);
    s.acc_dk = c.take<acc_t<T>>(tokens * p.D);
    s.acc_dv = c.take<acc_t<T>>(tokens * p.V);
    if (p.block == block_kernel::cudnn) {
      s.block_dq = c.take<T>(tokens * p.D);
      s.block_dk = c.take<T>(tokens * p.D);
      s.block_dv = c.take<T>(tokens * p.V);
    }
  }
  if (p.block == block_kernel::cudnn && (accumulate || packed_on_cudnn(p)))
    s.packed_lse = c.take<float>(stats);
  s.cudnn_workspace = base ? base + c.used : nullptr;
  *used = c.used;
  return s;
}

template <typename T>
status backward_typed(const problem& p, const backward_io& io) {
  using A = acc_t<T>;
  if (packed_on_cudnn(p) && !p.offsets) return "a packed batch on cuDNN needs its offsets";
  const std::vector<block_pair> plan = plan_of(p);
  const pair_visits when = visits_of(plan);
  size_t used = 0;
  const backward_space<T> ws =
      carve_backward<T>(p, needs_accumulators(when), static_cast<char*>(io.workspace), &used);
  if (used > io.workspace_bytes) return "workspace smaller than backward_workspace_bytes";
  const T* q = static_cast<const T*>(io.q);
  const T* k = static_cast<const T*>(io.k);
  const T* v = static_cast<const T*>(io.v);
  const T* o = static_cast<const T*>(io.o);
  const T* d_o = static_cast<const T*>(io.d_o);
  const A* lse = static_cast<const A*>(io.lse);
  T* dq = static_cast<T*>(io.dq);
  T* dk = static_cast<T*>(io.dk);
  T* dv = static_cast<T*>(io.dv);

  if (p.block == block_kernel::own)
    GLABENCH_TRY(row_dots_of<T>(p, {0, p.T}, d_o, o, ws.row_dots, io.stream));
  backward_tensors<T> x{
      q,           k,           v,           o,           d_o,           lse,
      ws.row_dots, ws.acc_dq,   dq,          ws.acc_dk,   ws.acc_dv,     dk,
      dv,          ws.block_dq, ws.block_dk, ws.block_dv, ws.packed_lse, ws.cudnn_workspace};
  x.cu_seqlens = io.cu_seqlens;
  for (size_t i = 0; i < plan.size(); ++i) {
    const visit wq = when.of_q[i], wkv = when.of_kv[i];
    const bool alone = wq.first && wq.last && wkv.first && wkv.last;
    const problem pp = block_problem(p, plan[i]);
    if (pp.block != p.block)  // the own kernel's D_i for the sequence's rows
      GLABENCH_TRY(row_dots_of<T>(pp, plan[i].q, d_o, o, ws.row_dots, io.stream));
    GLABENCH_TRY(backward_pair<T>(pp, plan[i], wq, wkv, alone, x, io.stream));
  }
  return {};
}

template <typename T>
struct forward_call {
  static status run(const problem& p, const forward_io& io) { return forward_typed<T>(p, io); }
  static size_t bytes(const problem& p) {
    size_t used = 0;
    carve_forward<T>(p, needs_accumulators(visits_of(plan_of(p))), nullptr, &used);
    return used;
  }
};
template <typename T>
struct backward_call {
  static status run(const problem& p, const backward_io& io) { return backward_typed<T>(p, io); }
  static size_t bytes(const problem& p) {
    size_t used = 0;
    carve_backward<T>(p, needs_accumulators(visits_of(plan_of(p))), nullptr, &used);
    return used;
  }
};
template <typename T>
struct forward_bytes {
  static size_t run(const problem& p) { return forward_call<T>::bytes(p); }
};
template <typename T>
struct backward_bytes {
  static size_t run(const problem& p) { return backward_call<T>::bytes(p); }
};

// The largest cuDNN workspace over the problem's block shapes (0 for the own kernel).
size_t cudnn_workspace_bytes(const problem& p, bool backward) {
  if (p.block != block_kernel::cudnn) return 0;
  int64_t most = 0;
  plan_cudnn_blocks(p, backward, &most);
  return size_t(most);
}

}  // namespace

status plan_cudnn_blocks(const problem& p, bool backward, int64_t* most_workspace_bytes) {
  return plan_cudnn_pairs(p, plan_of(p), backward, most_workspace_bytes);
}

size_t forward_workspace_bytes(const problem& p) {
  return by_dtype<forward_bytes>(p.dtype, p) + cudnn_workspace_bytes(p, false);
}
size_t backward_workspace_bytes(const problem& p) {
  return by_dtype<backward_bytes>(p.dtype, p) + cudnn_workspace_bytes(p, true);
}

status run_forward(const problem& p, const forward_io& io) {
  return by_dtype<forward_call>(p.dtype, p, io);
}
status run_backward(const problem& p, const backward_io& io) {
  return by_dtype<backward_call>(p.dtype, p, io);
}

}  // namespace glabench::ring
