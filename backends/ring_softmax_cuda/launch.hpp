// The host side of ring_softmax_cuda: one problem, its workspace, and the ring's
// forward and backward on one device. Plain C++ (the plugin's .cpp and the shard test
// include it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../common/cuda_error.hpp"
#include "ring_plan.hpp"

namespace glabench::ring {

enum class storage { fp64, fp32, bf16, fp16 };
// The 16-bit storage dtypes, the ones cuDNN's blocks take.
constexpr bool is_16bit(storage s) {
  return s == storage::bf16 || s == storage::fp16;
}

// Which kernel computes a (query chunk, key chunk) block: cuDNN's fused attention
// (16-bit only) or this backend's own blockwise kernel (every dtype, FFMA/DFMA).
enum class block_kernel { own, cudnn };

struct problem {
  storage dtype;
  int B, H, D, V;  // D: query/key head size
  int64_t T;
  double scale;
  bool causal;
  int shards;  // RING_SOFTMAX_CUDA_SHARDS: the ring's schedule on one device
  layout chunking;
  block_kernel block;
  // A packed batch (B = 1): num_seqs sequences, each attending only within itself, their
  // int32 offsets in the calls' cu_seqlens. 0: B sequences of T tokens.
  int64_t num_seqs = 0;
  // The offsets on the host (num_seqs + 1), which cuDNN's blocks need: a block a sequence
  // (packed_schedule). The own kernel reads cu_seqlens on the device instead.
  const std::vector<int64_t>* offsets = nullptr;
};

// Device pointers in the ABI's layouts: q, k [B,T,H,D], v, o [B,T,H,V], lse [B,H,T]
// (fp64 for fp64 problems, else fp32); cu_seqlens [num_seqs + 1] for a packed batch.
struct forward_io {
  const void *q, *k, *v;
  void *o, *lse;
  void* workspace;
  size_t workspace_bytes;
  cudaStream_t stream;
  const int32_t* cu_seqlens = nullptr;
};

struct backward_io {
  const void *q, *k, *v, *o, *lse, *d_o;
  void *dq, *dk, *dv;
  void* workspace;
  size_t workspace_bytes;
  cudaStream_t stream;
  const int32_t* cu_seqlens = nullptr;
};

// Empty on success, else what failed (a CUDA or cuDNN error, named): the CUDA backends'
// one error path (../common/cuda_error.hpp).
using cuda_plugin::cuda_error;
using cuda_plugin::status;

// Builds cuDNN's graph for every block shape of the problem's schedule (untimed; they
// are cached). Empty = cuDNN takes them all, and `most_workspace_bytes` is the largest
// workspace a block needs; else why cuDNN refuses one.
status plan_cudnn_blocks(const problem& p, bool backward, int64_t* most_workspace_bytes);

size_t forward_workspace_bytes(const problem& p);
size_t backward_workspace_bytes(const problem& p);
status run_forward(const problem& p, const forward_io& io);
status run_backward(const problem& p, const backward_io& io);

}  // namespace glabench::ring
