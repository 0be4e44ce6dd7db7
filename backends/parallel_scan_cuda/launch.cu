// Launch configuration and dispatch: picks the lane count NL from the head size (a
// compile-time variant per power of two, masks for the rest), sets the dynamic shared
// memory, and checks every launch.
#include <cuda_bf16.h>

#include "backward_dq_dk_dg_kernel.cuh"
#include "backward_dv_kernel.cuh"
#include "forward_kernel.cuh"
#include "scan_args.hpp"

namespace glabench::parallel_scan {
namespace {

// Tile sizes, from bench/tile_sweep.cu on an H200 (2026-11-22, commit 3707288 and
// after; reports/2026-11-22-h200-parallel_scan_cuda-rescaled/). At B4 T2048 H16 D128,
// forward: fp32 with 16-token chunks 0.510 ms against 0.556 with 8 (2.72 against 3.15
// ms at B2 T16384), bf16 with 8-token chunks 0.500 ms against 0.538 with 16 (2.80
// against 3.15); 1 column per thread (256-thread blocks) 0.94–0.99 ms; 4-token chunks
// 0.75–0.81 ms. Row kernel: 8-token chunks 1.34 ms against 1.48 with 16 (which spills).
// Keeping the next two or three chunks' loads in flight (DEPTH) was slower everywhere
// (0.58–0.62 ms forward): the registers it takes cost more than the latency it hides.
// Earlier sweeps (reports/2026-11-21-…-v3/, -v4/) ruled out 4 or 8 columns per thread,
// strips of 8 or 32 and token unrolling. fp64 uses 4-token chunks to keep its doubles
// in registers.
template <typename Elem>
struct tiles {
  static constexpr int L = 16;          // strip length along the reduced axis
  static constexpr int PER_THREAD = 2;  // value columns (forward, dv) or key rows (dq, dk, dg)
  static constexpr int TC_COLUMNS = 8;  // tokens per staged chunk: forward and dv kernels
  static constexpr int TC_ROWS = 8;     // … and the row kernel
  static constexpr int THREADS = 128;
  static constexpr int DEPTH = 1;  // chunks whose global loads are in flight
};
template <>
struct tiles<float> : tiles<__nv_bfloat16> {
  static constexpr int TC_COLUMNS = 16;
};
template <>
struct tiles<double> : tiles<__nv_bfloat16> {
  static constexpr int TC_COLUMNS = 4, TC_ROWS = 4;
};

// At least 4 lanes: fewer would put hundreds of columns in one block and its staging
// would not fit in registers; small heads are masked instead.
int lanes_for(int64_t head_size, int L) {
  int lanes = 4;
  while (lanes * L < head_size) lanes *= 2;
  return lanes;
}

template <typename Kernel>
cudaError_t launch(Kernel kernel, dim3 grid, int threads, size_t smem_bytes, const scan_args& a) {
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(smem_bytes)))
    return e;
  kernel<<<grid, threads, smem_bytes, a.stream>>>(a);
  return cudaGetLastError();
}

template <typename Elem, int NL, int CJ>
cudaError_t forward_with(const scan_args& a) {
  using t = tiles<Elem>;
  using stage = chunk_stage<Elem, NL, t::L, CJ, t::TC_COLUMNS, t::THREADS>;
  const dim3 grid(unsigned((a.V + stage::kColumns - 1) / stage::kColumns), unsigned(a.B * a.H));
  const size_t smem = 2 * stage::kBufferValues * sizeof(typename stage::C);
  return launch(forward_kernel<Elem, NL, t::L, CJ, t::TC_COLUMNS, t::THREADS, t::DEPTH>, grid, t::THREADS,
                smem, a);
}

template <typename Elem, int NL, int CJ>
cudaError_t backward_dv_with(const scan_args& a) {
  using t = tiles<Elem>;
  using stage = chunk_stage<Elem, NL, t::L, CJ, t::TC_COLUMNS, t::THREADS>;
  const dim3 grid(unsigned((a.V + stage::kColumns - 1) / stage::kColumns), unsigned(a.B * a.H));
  const size_t smem = 2 * stage::kBufferValues * sizeof(typename stage::C);
  return launch(backward_dv_kernel<Elem, NL, t::L, CJ, t::TC_COLUMNS, t::THREADS, t::DEPTH>, grid,
                t::THREADS, smem, a);
}

template <typename Elem, int NL, int RJ>
cudaError_t backward_dq_dk_dg_with(const scan_args& a) {
  using t = tiles<Elem>;
  using stage = row_stage<Elem, NL, t::L, RJ, t::TC_ROWS, t::THREADS>;
  const int64_t tokens = a.B * a.T * a.H;  // v·do first: 8 tokens (warps) a block
  if (cudaError_t e = launch(token_dot_kernel<Elem>, dim3(unsigned((tokens + 7) / 8)), 256, 0, a))
    return e;
  const dim3 grid(unsigned((a.K + stage::kRows - 1) / stage::kRows), unsigned(a.B * a.H));
  const size_t smem = (2 * stage::kBufferValues + stage::kScratchValues) * sizeof(typename stage::C);
  return launch(backward_dq_dk_dg_kernel<Elem, NL, t::L, RJ, t::TC_ROWS, t::THREADS, t::DEPTH>, grid,
                t::THREADS, smem, a);
}

// NL ∈ {4, 8, 16}: head sizes ≤ 64, ≤ 128, ≤ 256.
template <typename Fn>
cudaError_t with_lanes(int lanes, Fn&& fn) {
  switch (lanes) {
    case 4:
      return fn(std::integral_constant<int, 4>{});
    case 8:
      return fn(std::integral_constant<int, 8>{});
    case 16:
      return fn(std::integral_constant<int, 16>{});
  }
  return cudaErrorInvalidValue;
}

// Backward: 1 column (row) per thread instead of 2 when 2 would leave SMs idle. With
// the per-chunk reductions this still pays for the backward at small B·H (B4 T1024 H4
// D100 fp32 forward+backward 1.34 ms with it, 1.70 ms without; B2 T16384 H16 D128
// 27.7 against 29.1 ms); the forward no longer gains from it.
int per_thread_for(int64_t owned, int64_t heads, int lanes, int threads, int wide) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return wide;
  const int64_t per_block = int64_t(threads / lanes) * wide;
  return (owned + per_block - 1) / per_block * heads < sms ? 1 : wide;
}

template <typename Elem, typename Fn>
cudaError_t with_per_thread(int per_thread, Fn&& fn) {
  if (per_thread == 1) return fn(std::integral_constant<int, 1>{});
  return fn(std::integral_constant<int, tiles<Elem>::PER_THREAD>{});
}

template <typename Elem>
cudaError_t forward_for(const scan_args& a) {
  return with_lanes(lanes_for(a.K, tiles<Elem>::L),
                    [&](auto nl) { return forward_with<Elem, nl(), tiles<Elem>::PER_THREAD>(a); });
}

template <typename Elem>
cudaError_t backward_for(const scan_args& a) {
  using t = tiles<Elem>;
  // dv and dh0 (column layout over K), then dq, dk, dg (row layout over V).
  const int lanes_k = lanes_for(a.K, t::L), lanes_v = lanes_for(a.V, t::L);
  if (cudaError_t e = with_lanes(lanes_k, [&](auto nl) {
        return with_per_thread<Elem>(
            per_thread_for(a.V, a.B * a.H, lanes_k, t::THREADS, t::PER_THREAD),
            [&](auto cj) { return backward_dv_with<Elem, nl(), cj()>(a); });
      }))
    return e;
  return with_lanes(lanes_v, [&](auto nl) {
    return with_per_thread<Elem>(
        per_thread_for(a.K, a.B * a.H, lanes_v, t::THREADS, t::PER_THREAD),
        [&](auto rj) { return backward_dq_dk_dg_with<Elem, nl(), rj()>(a); });
  });
}

}  // namespace

size_t backward_workspace_bytes(storage s, int64_t B, int64_t T, int64_t H, int64_t K) {
  return static_cast<size_t>(B * T * H * (K + 1)) * (s == storage::fp64 ? sizeof(double) : sizeof(float));
}

cudaError_t launch_forward(storage s, const scan_args& a) {
  switch (s) {
    case storage::fp64:
      return forward_for<double>(a);
    case storage::fp32:
      return forward_for<float>(a);
    case storage::bf16:
      return forward_for<__nv_bfloat16>(a);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_backward(storage s, const scan_args& a) {
  switch (s) {
    case storage::fp64:
      return backward_for<double>(a);
    case storage::fp32:
      return backward_for<float>(a);
    case storage::bf16:
      return backward_for<__nv_bfloat16>(a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace glabench::parallel_scan
