// Launch configuration and dispatch: picks the lane count NL from the head size (a
// compile-time variant per power of two, masks for the rest), sets the dynamic shared
// memory, and checks every launch.
#include <cuda_bf16.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <initializer_list>

#include "backward_dq_dk_dg_kernel.cuh"
#include "backward_dv_kernel.cuh"
#include "forward_kernel.cuh"
#include "scan_args.hpp"

namespace glabench::parallel_scan {
namespace {

// Tile sizes, from bench/tile_sweep.cu on an H200 (2026-11-22;
// reports/2026-11-22-h200-parallel_scan_cuda-rescaled/). WIDTH is the number of value
// columns (forward, dv) or key rows (dq, dk, dg) a thread owns: 4 halves the
// shared-memory loads per FMA against 2 but makes half the blocks, so it pays when
// the wide grid still fills the GPU (width_for). Forward at B4 T2048 H16 D128 (128
// blocks at width 4): bf16 0.467 ms at width 4 against 0.500 at 2, fp32 0.525 against
// 0.510 (width 2 with 16-token chunks); at B8 T1024 H32 D128 width 4 wins by 24–28%;
// at B2 T16384 H16 D128 (64 blocks at width 4) it loses by 29% (bf16 3.62 against
// 2.81 ms). Row kernel: width 4 1.96 against 2.48 ms at B8 T1024 H32, 1.45 against
// 1.33 ms at the target shape. fp32 at width 2 takes 16-token chunks (0.510 against
// 0.556 ms; B2 T16384 2.72 against 3.15 ms), otherwise 8. The row kernel takes 16-token
// chunks (255 registers against 168: 2 blocks an SM against 3) at width 2 when its grid
// puts ~2 or more blocks on an SM and needs no more waves than with 8: v·do + dq/dk/dg
// at the target shape 1.19 against 1.24 ms bf16, 1.17 against 1.22 fp32;
// forward+backward at B8 T1024 H16 D128 1.91 against 1.96 ms bf16; with one block an SM
// they lose (B2 T16384 H16 D128 13.1 against 12.4 ms bf16), and with an extra wave too
// (B1 T8192 H96 D128 14.3 ms at ea9ec8f, 12.2 with 8;
// reports/2026-11-22-h200-parallel_scan_cuda-backward-overheads/). 8 at widths 1 and 4
// (16 spills at 4). Keeping two or three chunks' loads in flight was slower everywhere
// (0.58–0.62 ms forward; run4_depth2/): the registers it takes cost more than the
// latency it hides. Earlier sweeps (reports/2026-11-21-…-v3/, -v4/) ruled out strips of
// 8 or 32 and token unrolling. fp64 (not a speed target) keeps width ≤ 2 and 4-token
// chunks, so that its doubles stay in registers.
template <typename Elem>
struct tiles {
  static constexpr int L = 16;  // strip length along the reduced axis
  static constexpr int THREADS = 128;
  static constexpr int MAX_WIDTH = 4;  // columns or rows a thread owns, at most
  // Tokens per staged chunk, by width: row kernel (`crowded`: its grid has ~2 or more
  // blocks an SM and no more waves with the longer chunks; backward_for), forward and
  // dv kernels.
  static constexpr int tc_rows(int width, bool crowded) { return width == 2 && crowded ? 16 : 8; }
  static constexpr int tc_columns(int) { return 8; }
  // Blocks (per SM) the width-4 grid must have to be chosen: forward and dv, rows.
  static constexpr double WIDE_COLUMNS = 0.9, WIDE_ROWS = 2.0;
};
template <>
struct tiles<float> : tiles<__nv_bfloat16> {
  static constexpr int tc_columns(int width) { return width == 4 ? 8 : 16; }
  // fp32 at width 2 (16-token chunks, 218 registers) fits 2 blocks an SM: past ~1.2
  // width-4 blocks an SM its grid needs a second wave.
  static constexpr double WIDE_COLUMNS = 1.2;
};
template <>
struct tiles<double> : tiles<__nv_bfloat16> {
  static constexpr int MAX_WIDTH = 2;
  static constexpr int tc_rows(int, bool) { return 4; }
  static constexpr int tc_columns(int) { return 4; }
};

// At least 4 lanes: fewer would put hundreds of columns in one block and its staging
// would not fit in registers; small heads are masked instead.
int lanes_for(int64_t head_size, int L) {
  int lanes = 4;
  while (lanes * L < head_size) lanes *= 2;
  return lanes;
}

// Per-device answers (up to 64 devices): remembered(known, ask) returns ask(device)
// for the current device, asking once; 0 (failed, or the device cannot be read) is
// not remembered.
using per_device = std::array<std::atomic<int>, 64>;
template <typename Ask>
int remembered(per_device& known, Ask&& ask) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  const bool cacheable = device >= 0 && device < int(known.size());
  if (cacheable)
    if (const int cached = known[device].load(std::memory_order_relaxed)) return cached;
  const int answer = ask(device);
  if (cacheable && answer) known[device].store(answer, std::memory_order_relaxed);
  return answer;
}

// The current device's SM count (0 if it cannot be read).
int sm_count() {
  static per_device known{};
  return remembered(known, [](int device) {
    int sms = 0;
    return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess ? sms : 0;
  });
}

// Raises `kernel`'s dynamic shared-memory limit to smem_bytes (a constant per kernel),
// once per device rather than on every launch.
template <auto kernel>
cudaError_t allow_shared_memory(size_t smem_bytes) {
  static per_device done{};
  cudaError_t error = cudaSuccess;
  remembered(done, [&](int) {
    error = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes));
    return error == cudaSuccess ? 1 : 0;
  });
  return error;
}

template <auto kernel>
cudaError_t launch(dim3 grid, int threads, size_t smem_bytes, const scan_args& a) {
  if (cudaError_t e = allow_shared_memory<kernel>(smem_bytes)) return e;
  kernel<<<grid, threads, smem_bytes, a.stream>>>(a);
  return cudaGetLastError();
}

template <typename Elem, int NL, int CJ>
cudaError_t forward_with(const scan_args& a) {
  using t = tiles<Elem>;
  constexpr int TC = t::tc_columns(CJ);
  using stage = chunk_stage<Elem, NL, t::L, CJ, TC, t::THREADS>;
  const dim3 grid(unsigned((a.V + stage::kColumns - 1) / stage::kColumns), unsigned(a.B * a.H));
  const size_t smem = 2 * stage::kBufferValues * sizeof(typename stage::C);
  return launch<forward_kernel<Elem, NL, t::L, CJ, TC, t::THREADS>>(grid, t::THREADS, smem, a);
}

template <typename Elem, int NL, int CJ>
cudaError_t backward_dv_with(const scan_args& a) {
  using t = tiles<Elem>;
  constexpr int TC = t::tc_columns(CJ);
  using stage = chunk_stage<Elem, NL, t::L, CJ, TC, t::THREADS>;
  const dim3 grid(unsigned((a.V + stage::kColumns - 1) / stage::kColumns), unsigned(a.B * a.H));
  const size_t smem = 2 * stage::kBufferValues * sizeof(typename stage::C);
  return launch<backward_dv_kernel<Elem, NL, t::L, CJ, TC, t::THREADS>>(grid, t::THREADS, smem, a);
}

// The row kernel variant and its dynamic shared memory.
template <typename Elem, int NL, int RJ, int TC>
struct row_kernel {
  using t = tiles<Elem>;
  using stage = row_stage<Elem, NL, t::L, RJ, TC, t::THREADS>;
  static constexpr auto kernel = backward_dq_dk_dg_kernel<Elem, NL, t::L, RJ, TC, t::THREADS>;
  static constexpr size_t smem =
      (2 * stage::kBufferValues + stage::kScratchValues) * sizeof(typename stage::C);
  // Blocks an SM of the current device holds at once (registers, shared memory); 0 if
  // unknown.
  static int blocks_per_sm() {
    static per_device known{};
    return remembered(known, [](int) {
      int n = 0;
      if (allow_shared_memory<kernel>(smem) != cudaSuccess ||
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, t::THREADS, smem) != cudaSuccess)
        return 0;
      return n;
    });
  }
};

template <typename Elem, int NL, int RJ, int TC>
cudaError_t backward_dq_dk_dg_with(const scan_args& a) {
  using rows = row_kernel<Elem, NL, RJ, TC>;
  const int64_t tokens = a.B * a.T * a.H;  // v·do first: 8 tokens (warps) a block
  if (cudaError_t e = launch<token_dot_kernel<Elem>>(dim3(unsigned((tokens + 7) / 8)), 256, 0, a))
    return e;
  const dim3 grid(unsigned((a.K + rows::stage::kRows - 1) / rows::stage::kRows), unsigned(a.B * a.H));
  return launch<rows::kernel>(grid, rows::t::THREADS, rows::smem, a);
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

// The integer in environment variable `name` if it is one of `allowed`, else 0.
int env_choice(const char* name, std::initializer_list<int> allowed) {
  const char* env = std::getenv(name);
  const int value = env ? std::atoi(env) : 0;
  for (const int choice : allowed)
    if (value == choice) return value;
  return 0;
}

// How many columns (rows) a thread owns: 4 when that grid has at least `wide` blocks
// per SM (tiles: WIDE_COLUMNS, WIDE_ROWS); else 2; the backward drops to 1 when 2
// would leave more than half the SMs idle (small B·H: the previous kernels measured
// B4 T1024 H4 D100 fp32 forward+backward 1.34 ms with it, 1.70 ms without; with the
// current ones 1 loses by 1.5–2× wherever 2 fills half the GPU, e.g. the row kernel at
// B4 T2048 H16 D128, 2.0–2.6 against 1.33 ms).
//
// PARALLEL_SCAN_CUDA_WIDTH=1, 2 or 4 forces a width (capped at the dtype's largest, and
// the forward never takes 1), so that tests can verify every variant on small fixtures.
int forced_width() {
  static const int width = env_choice("PARALLEL_SCAN_CUDA_WIDTH", {1, 2, 4});
  return width;
}

// PARALLEL_SCAN_CUDA_ROW_CHUNK=8 or 16 forces the row kernel's chunk where the width
// offers both (so that tests reach both width-2 kernels: small fixtures' grids are
// never crowded); 0 when unset.
int forced_row_chunk() {
  static const int chunk = env_choice("PARALLEL_SCAN_CUDA_ROW_CHUNK", {8, 16});
  return chunk;
}

int width_for(int64_t owned, int64_t heads, int lanes, int threads, int max_width, double wide,
              bool allow_one) {
  if (const int forced = forced_width())
    return forced > max_width ? max_width : (forced == 1 && !allow_one ? 2 : forced);
  const int sms = sm_count();
  if (sms == 0) return 2;
  auto blocks = [&](int width) {
    const int64_t per_block = int64_t(threads / lanes) * width;
    return double((owned + per_block - 1) / per_block * heads);
  };
  if (max_width >= 4 && blocks(4) >= wide * sms) return 4;
  if (allow_one && blocks(2) < 0.5 * sms) return 1;
  return 2;
}

template <typename Elem, typename Fn>
cudaError_t with_width(int width, Fn&& fn) {
  if (width == 1) return fn(std::integral_constant<int, 1>{});
  if constexpr (tiles<Elem>::MAX_WIDTH >= 4)
    if (width == 4) return fn(std::integral_constant<int, 4>{});
  return fn(std::integral_constant<int, 2>{});
}

template <typename Elem>
cudaError_t forward_for(const scan_args& a) {
  using t = tiles<Elem>;
  const int lanes = lanes_for(a.K, t::L);
  const int width = width_for(a.V, a.B * a.H, lanes, t::THREADS, t::MAX_WIDTH, t::WIDE_COLUMNS, false);
  return with_lanes(lanes, [&](auto nl) {
    return with_width<Elem>(width, [&](auto cj) {
      if constexpr (cj() == 1)
        return cudaErrorInvalidValue;  // the forward never takes width 1
      else
        return forward_with<Elem, nl(), cj()>(a);
    });
  });
}

template <typename Elem>
cudaError_t backward_for(const scan_args& a) {
  using t = tiles<Elem>;
  // dv and dh0 (column layout over K), then dq, dk, dg (row layout over V).
  const int lanes_k = lanes_for(a.K, t::L), lanes_v = lanes_for(a.V, t::L);
  const int64_t heads = a.B * a.H;
  const int dv_width = width_for(a.V, heads, lanes_k, t::THREADS, t::MAX_WIDTH, t::WIDE_COLUMNS, true);
  if (cudaError_t e = with_lanes(lanes_k, [&](auto nl) {
        return with_width<Elem>(dv_width, [&](auto cj) { return backward_dv_with<Elem, nl(), cj()>(a); });
      }))
    return e;
  const int row_width = width_for(a.K, heads, lanes_v, t::THREADS, t::MAX_WIDTH, t::WIDE_ROWS, true);
  const int64_t rows_per_block = t::THREADS / lanes_v * row_width;
  const int64_t row_blocks = (a.K + rows_per_block - 1) / rows_per_block * heads;
  return with_lanes(lanes_v, [&](auto nl) {
    return with_width<Elem>(row_width, [&](auto rj) {
      constexpr int tc = t::tc_rows(rj(), false), tc_crowded = t::tc_rows(rj(), true);
      if constexpr (tc_crowded != tc) {
        // The longer chunks where ~2 or more blocks share an SM and they take no more
        // waves than the shorter chunks' smaller blocks (B1 T8192 H96 D128: 384 blocks
        // are one wave at 3 blocks an SM, two at 2).
        const int64_t sms = sm_count();
        const int64_t per_sm_long = row_kernel<Elem, nl(), rj(), tc_crowded>::blocks_per_sm(),
                      per_sm_short = row_kernel<Elem, nl(), rj(), tc>::blocks_per_sm();
        auto waves = [&](int64_t per_sm) { return (row_blocks + per_sm * sms - 1) / (per_sm * sms); };
        const bool crowded = forced_row_chunk()
                                 ? forced_row_chunk() == 16
                                 : sms > 0 && per_sm_long > 0 && per_sm_short > 0 &&
                                       double(row_blocks) >= 1.5 * double(sms) &&
                                       waves(per_sm_long) <= waves(per_sm_short);
        if (crowded) return backward_dq_dk_dg_with<Elem, nl(), rj(), tc_crowded>(a);
      }
      return backward_dq_dk_dg_with<Elem, nl(), rj(), tc>(a);
    });
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
