// One (query chunk, key chunk) pair on one device, forward and backward: the block
// kernel (own or cuDNN) and the fold of its result into the running results. The
// one-device ring (ring_one_gpu.cu) and each rank of the multi-GPU ring (ranks_schedule.cu)
// walk their pairs through these; the kernels are compiled once, in pair_steps.cu.
// Tensors are [B,T,H,X] (lse [B,H,T]) at the sequence's own positions, so a pair's rows
// are where the plan's spans say.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "block_types.cuh"
#include "cudnn_block.hpp"
#include "launch.hpp"

namespace glabench::ring {

// Is each pair the first or last of its query chunk, and of its key chunk, in `plan`?
struct pair_visits {
  std::vector<visit> of_q, of_kv;
};
inline pair_visits visits_of(const std::vector<block_pair>& plan) {
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

// The pair's geometry for the own kernels; cu_seqlens: a packed batch's offsets.
inline pair_geometry geometry(const problem& p, const block_pair& bp, const int32_t* cu_seqlens) {
  return {p.B,
          p.H,
          p.D,
          p.V,
          p.T,
          bp.q.begin,
          bp.q.size(),
          bp.kv.begin,
          bp.kv.size(),
          bp.mask == pair_mask::causal_diagonal,
          p.num_seqs > 0 ? cu_seqlens : nullptr,
          int(p.num_seqs)};
}

inline cudnn_block::pair_shape cudnn_shape(const problem& p, const block_pair& bp) {
  return {p.B,
          p.H,
          p.D,
          p.V,
          p.T,
          bp.q.size(),
          bp.kv.size(),
          bp.mask == pair_mask::causal_diagonal,
          static_cast<float>(p.scale),
          p.dtype == storage::fp16};
}

// A packed batch's one-token sequence: cuDNN refuses its block (s_q = s_kv = 1), so it
// runs on the own kernel.
inline bool one_token_sequence(const problem& p, const block_pair& bp) {
  return p.num_seqs > 0 && bp.q.size() == 1 && bp.kv.size() == 1;
}

// cuDNN's graph of every pair's block shape, built and cached (untimed). Empty = cuDNN
// takes them all (a packed batch's one-token sequences aside), and `most_workspace_bytes`
// is the largest workspace one needs; else why cuDNN refuses one.
inline std::string plan_cudnn_pairs(const problem& p, const std::vector<block_pair>& pairs,
                                    bool backward, int64_t* most_workspace_bytes) {
  *most_workspace_bytes = 0;
  for (const block_pair& bp : pairs) {
    if (one_token_sequence(p, bp)) continue;
    int64_t bytes = 0;
    const cudnn_block::pair_shape shape = cudnn_shape(p, bp);
    if (std::string why = backward ? cudnn_block::plan_backward(shape, &bytes)
                                   : cudnn_block::plan_forward(shape, &bytes);
        !why.empty())
      return why;
    *most_workspace_bytes = std::max(*most_workspace_bytes, bytes);
  }
  return {};
}

// is_16bit (launch.hpp) for a storage type.
template <typename T>
inline constexpr bool is_16bit_type = std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>;

// F<T>::run(args...) for the problem's storage dtype.
template <template <typename> class F, typename... Args>
auto by_dtype(storage s, Args&&... args) {
  switch (s) {
    case storage::fp64:
      return F<double>::run(std::forward<Args>(args)...);
    case storage::fp32:
      return F<float>::run(std::forward<Args>(args)...);
    case storage::fp16:
      return F<__half>::run(std::forward<Args>(args)...);
    default:
      return F<__nv_bfloat16>::run(std::forward<Args>(args)...);
  }
}
// Rows `rows` of a [B,T,H,X] tensor: `partial` (NULL: nothing) folded into `acc`, or
// with `when.last` the total written to `out`. T: the storage dtype, or acc_t to fold
// one accumulator into another.
template <typename T>
std::string fold_rows(const problem& p, span rows, int X, visit when, const T* partial,
                      acc_t<T>* acc, T* out, cudaStream_t stream);

// out = a + b over n values, summed in acc_t<T>; a and out in T or acc_t<T>, b in T
// (the ranks' whole-shard gradient sums of cuDNN's blocks: compiled for 16-bit only).
template <typename T, typename P, typename O>
std::string sum_values(int64_t n, const P* a, const T* b, O* out, cudaStream_t stream);

template <typename T>
struct forward_tensors {
  const T *q, *k, *v;        // k, v: where this pair's key chunk is now
  acc_t<T>*acc_o, *acc_lse;  // the query rows' running result
  T* o;                      // written by the query chunk's last pair
  acc_t<T>* lse;
  T* block_o;          // cuDNN: a block's output
  float* block_stats;  // cuDNN: a block's lse
  void* cudnn_workspace;
  const T* running_o = nullptr;         // cuDNN: the running o in the storage dtype (else acc_o)
  const int32_t* cu_seqlens = nullptr;  // a packed batch's offsets (own kernel)
};

// The pair's block folded into its query rows. `alone` (the chunk's only pair, cuDNN):
// the block is written straight to o and lse.
template <typename T>
std::string forward_pair(const problem& p, const block_pair& bp, visit w, bool alone,
                         const forward_tensors<T>& x, cudaStream_t stream);

template <typename T>
struct backward_tensors {
  const T *q, *k, *v, *o, *d_o;  // k, v: where this pair's key chunk is now
  const acc_t<T>* lse;
  const acc_t<T>* row_dots;  // own kernel: do·o per row (row_dots_of)
  acc_t<T>* acc_dq;
  T* dq;  // written by the query chunk's last pair
  acc_t<T>*acc_dk, *acc_dv;
  T *dk, *dv;                         // written by the key chunk's last pair
  T *block_dq, *block_dk, *block_dv;  // cuDNN: a block's gradients
  float* packed_lse;                  // cuDNN: the query chunk's rows of lse, packed
  void* cudnn_workspace;
  const int32_t* cu_seqlens = nullptr;  // a packed batch's offsets (own kernel)
};

// do·o for the rows of `rows` (the own kernel's D_i).
template <typename T>
std::string row_dots_of(const problem& p, span rows, const T* d_o, const T* o, acc_t<T>* out,
                        cudaStream_t stream);

// The pair's dq folded into its query rows (visit wq) and its dk, dv into its key rows
// (visit wkv). `alone` (the only pair of both chunks, cuDNN): written straight out.
template <typename T>
std::string backward_pair(const problem& p, const block_pair& bp, visit wq, visit wkv, bool alone,
                          const backward_tensors<T>& x, cudaStream_t stream);

// backward_pair's cuDNN block alone, without the folds: the pair's gradients into
// x.block_dq, block_dk, block_dv (`alone`: straight into dq, dk, dv). The ranks fold dq
// at once and dk, dv once the keys' accumulator has arrived.
template <typename T>
std::string cudnn_backward_block(const problem& p, const block_pair& bp, bool alone,
                                 const backward_tensors<T>& x, cudaStream_t stream);

}  // namespace glabench::ring
