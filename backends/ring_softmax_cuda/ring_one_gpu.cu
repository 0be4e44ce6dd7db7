// The ring's schedule on one device (RING_SOFTMAX_CUDA_SHARDS = N): every pair of
// ring_schedule() in order, each block folded into its rows' running result as it
// arrives, exactly as a rank would fold the blocks the ring brings it. With N = 1 the
// one pair writes o and lse directly.
#include <cuda_bf16.h>

#include <map>
#include <utility>
#include <vector>

#include "block_backward.cuh"
#include "block_forward.cuh"
#include "cudnn_block.hpp"
#include "launch.hpp"
#include "lse_merge.cuh"

namespace glabench::ring {
namespace {

constexpr size_t kAlign = 256;
size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }


// Carves the workspace in order; the sizes function and the run use the same carving.
struct carver {
  char* base;
  size_t used = 0;
  template <typename X> X* take(size_t count) {
    X* p = reinterpret_cast<X*>(base ? base + used : nullptr);
    used += aligned(count * sizeof(X));
    return p;
  }
};

// Is each pair the first or last of its query chunk, and of its key chunk?
struct pair_visits {
  std::vector<visit> of_q, of_kv;
};
pair_visits visits_of(const std::vector<block_pair>& plan) {
  pair_visits v;
  std::map<int64_t, size_t> first_q, last_q, first_kv, last_kv;
  for (size_t i = 0; i < plan.size(); ++i) {
    first_q.try_emplace(plan[i].q.begin, i);
    last_q[plan[i].q.begin] = i;
    first_kv.try_emplace(plan[i].kv.begin, i);
    last_kv[plan[i].kv.begin] = i;
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    v.of_q.push_back({first_q[plan[i].q.begin] == i, last_q[plan[i].q.begin] == i});
    v.of_kv.push_back({first_kv[plan[i].kv.begin] == i, last_kv[plan[i].kv.begin] == i});
  }
  return v;
}

pair_geometry geometry(const problem& p, const block_pair& bp) {
  return {p.B, p.H, p.D, p.V, p.T, bp.q.begin, bp.q.size(), bp.kv.begin, bp.kv.size(),
          bp.mask == pair_mask::causal_diagonal};
}

cudnn_block::pair_shape cudnn_shape(const problem& p, const block_pair& bp) {
  return {p.B, p.H, p.D, p.V, p.T, bp.q.size(), bp.kv.size(), bp.mask == pair_mask::causal_diagonal,
          static_cast<float>(p.scale)};
}

std::vector<block_pair> plan_of(const problem& p) { return ring_schedule(p.T, p.shards, p.chunking, p.causal); }

std::string cuda_error(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

// The dynamic shared memory limit of a kernel, raised once per kernel.
template <typename Kernel>
cudaError_t allow_smem(Kernel kernel, size_t bytes) {
  static size_t allowed = 0;
  if (bytes <= 48 * 1024 || bytes <= allowed) return cudaSuccess;
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  if (e == cudaSuccess) allowed = bytes;
  return e;
}

dim3 grid_of(int64_t rows, const problem& p) {
  return dim3(unsigned((rows + kOwnRows - 1) / kOwnRows), unsigned(p.B * p.H));
}
unsigned row_grid(int64_t rows) { return unsigned(rows / 8 + 1 < 4096 ? rows / 8 + 1 : 4096); }

// ---- forward -------------------------------------------------------------------------

// The running results live in accumulators only when more than one pair meets a chunk;
// a lone pair (N = 1, ring) writes the outputs directly.
bool needs_accumulators(const problem& p) { return plan_of(p).size() > 1; }

template <typename T>
struct forward_space {
  acc_t<T>* acc_o;
  acc_t<T>* acc_lse;
  T* block_o;          // cuDNN: a block's output
  float* block_stats;  // cuDNN: a block's lse
  void* cudnn_workspace;  // cuDNN: the rest of the workspace
};

// The workspace in order; cuDNN's own workspace is what follows (`used` excludes it).
template <typename T>
forward_space<T> carve_forward(const problem& p, char* base, size_t* used) {
  carver c{base};
  const size_t tokens = size_t(p.B) * p.T * p.H, stats = size_t(p.B) * p.H * p.T;
  forward_space<T> s{};
  if (needs_accumulators(p)) {
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
  const std::vector<block_pair> plan = plan_of(p);
  const pair_visits when = visits_of(plan);
  size_t used = 0;
  const forward_space<T> ws = carve_forward<T>(p, static_cast<char*>(io.workspace), &used);
  if (used > io.workspace_bytes) return "workspace smaller than forward_workspace_bytes";
  const T* q = static_cast<const T*>(io.q);
  const T* k = static_cast<const T*>(io.k);
  const T* v = static_cast<const T*>(io.v);
  T* o = static_cast<T*>(io.o);
  A* lse = static_cast<A*>(io.lse);
  const size_t smem = forward_smem_values<A>(p.D, p.V) * sizeof(A);
  if (cudaError_t e = allow_smem(block_forward_kernel<T>, smem)) return cuda_error(e, "cudaFuncSetAttribute");

  for (size_t i = 0; i < plan.size(); ++i) {
    const block_pair& bp = plan[i];
    const pair_geometry g = geometry(p, bp);
    const visit w = when.of_q[i];
    if (p.block == block_kernel::own) {
      block_forward_kernel<T><<<grid_of(bp.q.size(), p), kThreads, smem, io.stream>>>(
          g, w, A(p.scale), q, k, v, ws.acc_o, ws.acc_lse, o, lse);
      if (cudaError_t e = cudaGetLastError()) return cuda_error(e, "block_forward_kernel launch");
      continue;
    }
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      // cuDNN writes the block; a lone block (first and last) goes straight to o and lse.
      const bool alone = w.first && w.last;
      T* block_o = alone ? o : ws.block_o;
      float* block_stats = alone ? lse : ws.block_stats;
      const size_t q_row = size_t(bp.q.begin) * p.H, kv_row = size_t(bp.kv.begin) * p.H;
      if (std::string why = cudnn_block::run_forward(cudnn_shape(p, bp), q + q_row * p.D, k + kv_row * p.D,
                                                     v + kv_row * p.V, block_o + q_row * p.V,
                                                     block_stats + bp.q.begin, ws.cudnn_workspace, io.stream);
          !why.empty())
        return why;
      if (alone) continue;
      merge_block_kernel<T, A><<<row_grid(int64_t(p.B) * bp.q.size() * p.H), 256, 0, io.stream>>>(
          g, w, ws.block_o, ws.block_stats, ws.acc_o, ws.acc_lse, o, lse);
      if (cudaError_t e = cudaGetLastError()) return cuda_error(e, "merge_block_kernel launch");
    } else {
      return "cuDNN blocks are bf16 only";
    }
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
backward_space<T> carve_backward(const problem& p, char* base, size_t* used) {
  carver c{base};
  const size_t tokens = size_t(p.B) * p.T * p.H, stats = size_t(p.B) * p.H * p.T;
  backward_space<T> s{};
  if (p.block == block_kernel::own) s.row_dots = c.take<acc_t<T>>(stats);
  if (needs_accumulators(p)) {
    s.acc_dq = c.take<acc_t<T>>(tokens * p.D);
    s.acc_dk = c.take<acc_t<T>>(tokens * p.D);
    s.acc_dv = c.take<acc_t<T>>(tokens * p.V);
    if (p.block == block_kernel::cudnn) {
      s.block_dq = c.take<T>(tokens * p.D);
      s.block_dk = c.take<T>(tokens * p.D);
      s.block_dv = c.take<T>(tokens * p.V);
      s.packed_lse = c.take<float>(stats);
    }
  }
  s.cudnn_workspace = base ? base + c.used : nullptr;
  *used = c.used;
  return s;
}

template <typename T>
status fold(const problem& p, span rows, int X, visit w, const T* partial, acc_t<T>* acc, T* out,
            cudaStream_t stream) {
  const int64_t n = int64_t(p.B) * rows.size() * p.H * X;
  const unsigned blocks = unsigned(n / 256 + 1 < 8192 ? n / 256 + 1 : 8192);
  fold_partial_kernel<T><<<blocks, 256, 0, stream>>>(p.B, p.T, p.H, X, rows.begin, rows.size(), w, partial, acc, out);
  if (cudaError_t e = cudaGetLastError()) return cuda_error(e, "fold_partial_kernel launch");
  return {};
}

template <typename T>
status backward_typed(const problem& p, const backward_io& io) {
  using A = acc_t<T>;
  const std::vector<block_pair> plan = plan_of(p);
  const pair_visits when = visits_of(plan);
  size_t used = 0;
  const backward_space<T> ws = carve_backward<T>(p, static_cast<char*>(io.workspace), &used);
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

  if (p.block == block_kernel::own) {
    const int64_t rows = int64_t(p.B) * p.T * p.H;
    row_dot_kernel<T><<<row_grid(rows), 256, 0, io.stream>>>(p.B, p.T, p.H, p.V, d_o, o, ws.row_dots);
    if (cudaError_t e = cudaGetLastError()) return cuda_error(e, "row_dot_kernel launch");
    const size_t dq_smem = dq_smem_values<A>(p.D, p.V) * sizeof(A);
    const size_t dkdv_smem = dkdv_smem_values<A>(p.D, p.V) * sizeof(A);
    if (cudaError_t e = allow_smem(block_dq_kernel<T>, dq_smem)) return cuda_error(e, "cudaFuncSetAttribute");
    if (cudaError_t e = allow_smem(block_dkdv_kernel<T>, dkdv_smem)) return cuda_error(e, "cudaFuncSetAttribute");
    for (size_t i = 0; i < plan.size(); ++i) {
      const block_pair& bp = plan[i];
      const pair_geometry g = geometry(p, bp);
      block_dq_kernel<T><<<grid_of(bp.q.size(), p), kThreads, dq_smem, io.stream>>>(
          g, when.of_q[i], A(p.scale), q, k, v, d_o, lse, ws.row_dots, ws.acc_dq, dq);
      if (cudaError_t e = cudaGetLastError()) return cuda_error(e, "block_dq_kernel launch");
      block_dkdv_kernel<T><<<grid_of(bp.kv.size(), p), kThreads, dkdv_smem, io.stream>>>(
          g, when.of_kv[i], A(p.scale), q, k, v, d_o, lse, ws.row_dots, ws.acc_dk, ws.acc_dv, dk, dv);
      if (cudaError_t e = cudaGetLastError()) return cuda_error(e, "block_dkdv_kernel launch");
    }
    return {};
  }
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    for (size_t i = 0; i < plan.size(); ++i) {
      const block_pair& bp = plan[i];
      const visit wq = when.of_q[i], wkv = when.of_kv[i];
      const bool alone = wq.first && wq.last && wkv.first && wkv.last;
      const size_t q_row = size_t(bp.q.begin) * p.H, kv_row = size_t(bp.kv.begin) * p.H;
      T* to_dq = alone ? dq : ws.block_dq;
      T* to_dk = alone ? dk : ws.block_dk;
      T* to_dv = alone ? dv : ws.block_dv;
      const float* stats = lse;
      if (!alone) {
        const int64_t n = int64_t(p.B) * p.H * bp.q.size();
        pack_lse_rows_kernel<<<unsigned(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096), 256, 0, io.stream>>>(
            p.B, p.H, p.T, bp.q.begin, bp.q.size(), lse, ws.packed_lse);
        if (cudaError_t e = cudaGetLastError()) return cuda_error(e, "pack_lse_rows_kernel launch");
        stats = ws.packed_lse;
      }
      if (std::string why = cudnn_block::run_backward(
              cudnn_shape(p, bp), q + q_row * p.D, k + kv_row * p.D, v + kv_row * p.V, o + q_row * p.V,
              d_o + q_row * p.V, stats, to_dq + q_row * p.D, to_dk + kv_row * p.D,
              to_dv + kv_row * p.V, ws.cudnn_workspace, io.stream);
          !why.empty())
        return why;
      if (alone) continue;
      if (status s = fold<T>(p, bp.q, p.D, wq, ws.block_dq, ws.acc_dq, dq, io.stream); !s.empty()) return s;
      if (status s = fold<T>(p, bp.kv, p.D, wkv, ws.block_dk, ws.acc_dk, dk, io.stream); !s.empty()) return s;
      if (status s = fold<T>(p, bp.kv, p.V, wkv, ws.block_dv, ws.acc_dv, dv, io.stream); !s.empty()) return s;
    }
    return {};
  } else {
    return "cuDNN blocks are bf16 only";
  }
}

template <template <typename> class F, typename... Args>
auto by_dtype(storage s, Args&&... args) {
  switch (s) {
    case storage::fp64: return F<double>::run(std::forward<Args>(args)...);
    case storage::fp32: return F<float>::run(std::forward<Args>(args)...);
    default: return F<__nv_bfloat16>::run(std::forward<Args>(args)...);
  }
}
template <typename T> struct forward_call {
  static status run(const problem& p, const forward_io& io) { return forward_typed<T>(p, io); }
  static size_t bytes(const problem& p) {
    size_t used = 0;
    carve_forward<T>(p, nullptr, &used);
    return used;
  }
};
template <typename T> struct backward_call {
  static status run(const problem& p, const backward_io& io) { return backward_typed<T>(p, io); }
  static size_t bytes(const problem& p) {
    size_t used = 0;
    carve_backward<T>(p, nullptr, &used);
    return used;
  }
};
template <typename T> struct forward_bytes {
  static size_t run(const problem& p) { return forward_call<T>::bytes(p); }
};
template <typename T> struct backward_bytes {
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
  *most_workspace_bytes = 0;
  for (const block_pair& bp : plan_of(p)) {
    int64_t bytes = 0;
    const cudnn_block::pair_shape shape = cudnn_shape(p, bp);
    if (status why = backward ? cudnn_block::plan_backward(shape, &bytes) : cudnn_block::plan_forward(shape, &bytes);
        !why.empty())
      return why;
    *most_workspace_bytes = std::max(*most_workspace_bytes, bytes);
  }
  return {};
}

size_t forward_workspace_bytes(const problem& p) {
  return by_dtype<forward_bytes>(p.dtype, p) + cudnn_workspace_bytes(p, false);
}
size_t backward_workspace_bytes(const problem& p) {
  return by_dtype<backward_bytes>(p.dtype, p) + cudnn_workspace_bytes(p, true);
}

status run_forward(const problem& p, const forward_io& io) { return by_dtype<forward_call>(p.dtype, p, io); }
status run_backward(const problem& p, const backward_io& io) { return by_dtype<backward_call>(p.dtype, p, io); }

}  // namespace glabench::ring
