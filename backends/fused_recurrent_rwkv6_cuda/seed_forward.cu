// Seed mode's forward launch: the tiled kernel over (NV, NK, B·H), then the sum of its NK
// partial outputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "seed_forward.cuh"
#include "seed_mode.hpp"

namespace glabench::fused_recurrent_rwkv6 {
namespace {

using parallel_scan::scan_args;
using parallel_scan::storage;

template <typename Elem, int BK>
cudaError_t run_seed(const scan_args& a) {
  const int64_t bv = seed_block(a.V), nk = (a.K + BK - 1) / BK, nv = (a.V + bv - 1) / bv;
  const dim3 grid(unsigned(nv), unsigned(nk), unsigned(a.B * a.H));
  seed_forward_kernel<Elem, BK><<<grid, unsigned(bv), 0, a.stream>>>(a);
  if (cudaError_t e = cudaGetLastError()) return e;
  const int64_t count = a.B * a.T * a.H * a.V;
  seed_reduce_kernel<Elem><<<unsigned((count + 255) / 256), 256, 0, a.stream>>>(a, nk);
  return cudaGetLastError();
}

template <typename Elem>
cudaError_t seed_for(const scan_args& a) {
  switch (seed_block(a.K)) {
    case 1:
      return run_seed<Elem, 1>(a);
    case 2:
      return run_seed<Elem, 2>(a);
    case 4:
      return run_seed<Elem, 4>(a);
    case 8:
      return run_seed<Elem, 8>(a);
    case 16:
      return run_seed<Elem, 16>(a);
    case 32:
      return run_seed<Elem, 32>(a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

size_t seed_forward_workspace_bytes(storage s, int64_t B, int64_t T, int64_t H, int64_t K,
                                    int64_t V) {
  const int64_t bk = seed_block(K), nk = (K + bk - 1) / bk;
  return static_cast<size_t>(nk * B * T * H * V) *
         (s == storage::fp64 ? sizeof(double) : sizeof(float));
}

cudaError_t launch_seed_forward(storage s, const scan_args& a) {
  switch (s) {
    case storage::fp64:
      return seed_for<double>(a);
    case storage::fp32:
      return seed_for<float>(a);
    case storage::bf16:
      return seed_for<__nv_bfloat16>(a);
    case storage::fp16:
      return seed_for<__half>(a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace glabench::fused_recurrent_rwkv6
