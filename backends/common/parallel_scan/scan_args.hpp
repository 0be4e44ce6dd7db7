// What a backend's host glue hands to the kernel launchers: the recurrence, sizes and
// raw device pointers (already offset by each DLTensor's byte_offset). Absent optional
// tensors are null.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace glabench::parallel_scan {

// The two recurrences the kernels run, on the same state S_t = diag(e^{g_t}) S_{t−1} + k_tᵀv_t:
//   gla:   o_t = scale · q_t S_t                                  (parallel_scan_cuda)
//   rwkv6: o_t = scale · q_t (S_{t−1} + diag(u) k_tᵀv_t)         (fused_recurrent_rwkv6_cuda)
enum class recurrence { gla, rwkv6 };

enum class storage { fp64, fp32, bf16 };

struct scan_args {
  int64_t B, T, H, K, V;
  double scale;
  const void *q, *k, *v, *g, *h0, *d_o, *dht;
  void *o, *ht, *dq, *dk, *dv, *dg, *dh0;
  void* workspace;  // backward: backward_workspace_bytes
  cudaStream_t stream;
  const void* u;  // rwkv6: the bonus [H,K]
  void* du;       // rwkv6: its gradient [H,K]
};

// Largest head sizes the kernels take (lanes × strip ≤ 16 × 16).
inline constexpr int64_t kMaxHeadSize = 256;

// The backward's workspace, in values of the compute type (fp64 or fp32): the hist part
// of ∂L/∂b [B,T,H,K] and v·do [B,T,H]; rwkv6 adds v_{t−1}·do_t [B,T,H] and du's
// per-sequence partial sums [B,H,K].
inline size_t backward_workspace_values(recurrence op, int64_t B, int64_t T, int64_t H, int64_t K) {
  return op == recurrence::gla ? static_cast<size_t>(B * T * H * (K + 1))
                               : static_cast<size_t>(B * T * H * (K + 2) + B * H * K);
}
inline size_t backward_workspace_bytes(recurrence op, storage s, int64_t B, int64_t T, int64_t H,
                                       int64_t K) {
  return backward_workspace_values(op, B, T, H, K) *
         (s == storage::fp64 ? sizeof(double) : sizeof(float));
}

// Each returns the CUDA error of its launches (cudaSuccess when all went well). Defined
// in launch.cuh; each backend instantiates its recurrence.
template <recurrence OP>
cudaError_t launch_forward(storage s, const scan_args& a);
template <recurrence OP>
cudaError_t launch_backward(storage s, const scan_args& a);

}  // namespace glabench::parallel_scan
