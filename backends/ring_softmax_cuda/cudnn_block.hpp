// One (query chunk, key chunk) block of 16-bit attention through cuDNN's fused flash
// attention (cudnn-frontend graphs), forward with its softmax statistics and backward
// from the final o and lse. cuDNN is not linked: it is loaded at run time
// (libcudnn.so.9 on the library path, e.g. a PyTorch environment's nvidia-cudnn
// package), so the backend runs without it on its own kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace glabench::ring::cudnn_block {

// Whether cuDNN is loaded (tried once), and why not. Always false in a build without
// the cudnn-frontend headers.
bool library_loaded(std::string* why);
// The loaded cuDNN's version, e.g. 91900; 0 when none.
long library_version();

// A block's shape on [B,T,H,X] tensors: q_len query rows against kv_len key rows, on
// the device current at the call. bf16, or fp16 where `fp16`.
struct pair_shape {
  int B, H, D, V;
  int64_t T, q_len, kv_len;
  bool causal_diagonal;  // the same chunk, causal (top-left aligned); else no mask
  float scale;
  bool fp16;
};

// Builds and caches the graph of this shape; empty string = ready, else why cuDNN
// refuses it. `workspace_bytes` is the graph's own workspace.
std::string plan_forward(const pair_shape& s, int64_t* workspace_bytes);
std::string plan_backward(const pair_shape& s, int64_t* workspace_bytes);

// Pointers point at the block's first row (token q_begin / kv_begin) of [B,T,H,X]
// tensors. The forward writes stats at lse[b=0, h=0, t=q_begin] of a float [B,H,T];
// the backward reads them packed, [B,H,q_len]. Errors named.
std::string run_forward(const pair_shape& s, const void* q, const void* k, const void* v, void* o,
                        float* stats, void* workspace, cudaStream_t stream);
std::string run_backward(const pair_shape& s, const void* q, const void* k, const void* v,
                         const void* o, const void* d_o, const float* stats, void* dq, void* dk,
                         void* dv, void* workspace, cudaStream_t stream);

}  // namespace glabench::ring::cudnn_block
