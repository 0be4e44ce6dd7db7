// The host side of the chunked kernels: what a forward or backward call needs, its
// workspace, and the launches. Plain C++ (the plugin's .cpp includes it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace glabench::chunked {

enum class storage { fp64, fp32, bf16 };
enum class stages { fused, separate };

struct call {
  storage dtype;
  stages path;
  int B, H, K, V;
  int64_t T;
  double scale;
  // Device pointers; optional ones null (h0, ht, dht, dh0).
  const void *q, *k, *v, *g, *h0, *d_o, *dht;
  void *o, *ht, *dq, *dk, *dv, *dg, *dh0;
  void* workspace;
  cudaStream_t stream;
};

size_t forward_workspace_bytes(storage dtype, stages path, int B, int64_t T, int H, int K, int V);
size_t backward_workspace_bytes(storage dtype, int B, int64_t T, int H, int K, int V);

cudaError_t launch_forward(const call& c);
cudaError_t launch_backward(const call& c);

}  // namespace glabench::chunked
