// A kernel variant is one instantiation of a kernel template at given tile sizes, with
// what launching it takes: its grid over the owned axis (V for the column kernels, K
// for the row kernel) × B·H, its dynamic shared memory, and its occupancy. The launch
// (launch.cuh) sizes its grids here; other translation units, such as the tile sweep
// (bench/tile_sweep.cu), can include this too, so that they time exactly what the
// launch runs.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "backward_dq_dk_dg_kernel.cuh"
#include "backward_dv_kernel.cuh"
#include "forward_kernel.cuh"
#include "occupancy.cuh"
#include "scan_args.hpp"

namespace glabench::parallel_scan {

// Launches `kernel` on a's stream and returns the launch's error.
template <auto kernel>
cudaError_t launch(dim3 grid, int threads, size_t smem_bytes, const scan_args& a) {
  if (cudaError_t e = allow_shared_memory<kernel>(smem_bytes)) return e;
  kernel<<<grid, threads, smem_bytes, a.stream>>>(a);
  return cudaGetLastError();
}

// A column-layout kernel variant (the forward, or dv with DV): its grid over V and its
// shared memory (the two staging buffers).
// C: the compute type (double for the forward's fp64-state fp32 mode).
template <recurrence OP, typename Elem, int NL, int L, int THREADS, int CJ, int TC, bool DV,
          typename C = compute_t<Elem>>
struct column_kernel {
  using stage = chunk_stage<OP, Elem, NL, L, CJ, TC, THREADS, C>;
  static constexpr auto kernel = [] {
    if constexpr (DV)
      return backward_dv_kernel<OP, Elem, NL, L, CJ, TC, THREADS>;
    else
      return forward_kernel<OP, Elem, NL, L, CJ, TC, THREADS, C>;
  }();
  static constexpr int64_t kPerBlock = stage::kColumns;
  static constexpr size_t smem = 2 * stage::kBufferValues * sizeof(typename stage::C);
  static int blocks_per_sm() { return resident_blocks<kernel>(THREADS, smem); }
  static cudaError_t run(const scan_args& a) {
    const dim3 grid(unsigned((a.V + kPerBlock - 1) / kPerBlock), unsigned(a.B * a.H));
    return launch<kernel>(grid, THREADS, smem, a);
  }
};

// A row kernel variant, run after v·do (token_dot_kernel) and, for rwkv6, followed by
// du's sum over the batch (du_kernel): its grid over K and its shared memory (the two
// staging buffers and the scratch past them).
template <recurrence OP, typename Elem, int NL, int L, int THREADS, int RJ, int TC>
struct row_kernel {
  using stage = row_stage<OP, Elem, NL, L, RJ, TC, THREADS>;
  static constexpr auto kernel = backward_dq_dk_dg_kernel<OP, Elem, NL, L, RJ, TC, THREADS>;
  static constexpr int64_t kPerBlock = stage::kRows;
  static constexpr size_t smem =
      (2 * stage::kBufferValues + stage::kScratchValues) * sizeof(typename stage::C);
  static int blocks_per_sm() { return resident_blocks<kernel>(THREADS, smem); }
  // v·do, which the row kernel reads: 8 tokens (warps) a block.
  static cudaError_t run_token_dot(const scan_args& a) {
    const int64_t tokens = batch_tokens(a) * a.H;
    return launch<token_dot_kernel<OP, Elem>>(dim3(unsigned((tokens + 7) / 8)), 256, 0, a);
  }
  static cudaError_t run(const scan_args& a) {
    if (cudaError_t e = run_token_dot(a)) return e;
    const dim3 grid(unsigned((a.K + kPerBlock - 1) / kPerBlock), unsigned(a.B * a.H));
    if (cudaError_t e = launch<kernel>(grid, THREADS, smem, a)) return e;
    if constexpr (OP == recurrence::rwkv6)
      return launch<du_kernel<Elem>>(dim3(unsigned((a.H * a.K + 255) / 256)), 256, 0, a);
    return cudaSuccess;
  }
};

}  // namespace glabench::parallel_scan
