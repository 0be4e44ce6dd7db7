// What the host glue hands to the kernel launchers: sizes and raw device pointers
// (already offset by each DLTensor's byte_offset). Absent optional tensors are null.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace glabench::parallel_scan {

enum class storage { fp64, fp32, bf16 };

struct scan_args {
  int64_t B, T, H, K, V;
  double scale;
  const void *q, *k, *v, *g, *h0, *d_o, *dht;
  void *o, *ht, *dq, *dk, *dv, *dg, *dh0;
  void* workspace;  // backward: B·T·H·(K + 1) values of the compute type (fp64 or fp32)
  cudaStream_t stream;
};

// Largest head sizes the kernels take (lanes × strip ≤ 16 × 16).
inline constexpr int64_t kMaxHeadSize = 256;

// The backward's workspace: B·T·H·(K + 1) values of the compute type.
inline size_t backward_workspace_bytes(storage s, int64_t B, int64_t T, int64_t H, int64_t K) {
  return static_cast<size_t>(B * T * H * (K + 1)) * (s == storage::fp64 ? sizeof(double) : sizeof(float));
}

// Each returns the CUDA error of its launches (cudaSuccess when all went well).
cudaError_t launch_forward(storage s, const scan_args& a);
cudaError_t launch_backward(storage s, const scan_args& a);

}  // namespace glabench::parallel_scan
