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

enum class storage { fp64, fp32, bf16, fp16 };

struct scan_args {
  int64_t B, T, H, K, V;
  double scale;
  const void *q, *k, *v, *g, *h0, *d_o, *dht;
  void *o, *ht, *dq, *dk, *dv, *dg, *dh0;
  void* workspace;  // backward: backward_workspace_bytes
  cudaStream_t stream;
  const void* u;  // rwkv6: the bonus [H,K]
  void* du;       // rwkv6: its gradient [H,K]
  // A packed batch (ABI 1.5, GLABENCH_FEATURE_VARLEN): B sequences end to end in one row
  // of T tokens, sequence b the tokens [cu_seqlens[b], cu_seqlens[b+1]), each from its
  // own h0[b] to ht[b]. Null: B sequences of T tokens each.
  const int32_t* cu_seqlens;
  // h0, ht, dht and dh0 are fp32 at 16-bit storage (GLABENCH_FEATURE_STATE_FP32); otherwise
  // in the storage dtype.
  bool state_fp32;
};

// Every token of the batch: B·T, or a packed batch's T (host and kernels alike;
// cuda_runtime_api.h makes __host__ __device__ empty for the host compiler).
__host__ __device__ inline int64_t batch_tokens(const scan_args& a) {
  return a.cu_seqlens ? a.T : a.B * a.T;
}

// Largest head sizes the kernels take (lanes × strip ≤ 16 × 16).
inline constexpr int64_t kMaxHeadSize = 256;

// The backward's workspace, in values of the compute type (fp64 or fp32), for `tokens`
// tokens in `sequences` sequences: the hist part of ∂L/∂b [tokens,H,K] and v·do
// [tokens,H]; rwkv6 adds v_{t−1}·do_t [tokens,H] and du's per-sequence partial sums
// [sequences,H,K].
inline size_t backward_workspace_values(recurrence op, int64_t tokens, int64_t sequences, int64_t H,
                                        int64_t K) {
  return op == recurrence::gla ? static_cast<size_t>(tokens * H * (K + 1))
                               : static_cast<size_t>(tokens * H * (K + 2) + sequences * H * K);
}
inline size_t backward_workspace_bytes(recurrence op, storage s, int64_t tokens, int64_t sequences,
                                       int64_t H, int64_t K) {
  return backward_workspace_values(op, tokens, sequences, H, K) *
         (s == storage::fp64 ? sizeof(double) : sizeof(float));
}

// Each returns the CUDA error of its launches (cudaSuccess when all went well). Defined
// in launch.cuh; each backend instantiates its recurrence.
template <recurrence OP>
cudaError_t launch_forward(storage s, const scan_args& a);
template <recurrence OP>
cudaError_t launch_backward(storage s, const scan_args& a);

}  // namespace glabench::parallel_scan
