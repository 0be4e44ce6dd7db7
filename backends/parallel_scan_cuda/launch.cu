// Launch configuration and dispatch: picks the lane count NL from the head size (a
// compile-time variant per power of two, masks for the rest), sets the dynamic shared
// memory, and checks every launch.
#include <cuda_bf16.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <type_traits>

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

// The wide geometry (fp32 and bf16, heads of at most 128): strips of 8 and 256 threads,
// so twice the lanes of the narrow geometry above and the same columns (rows) per
// block: the same grid with half of each thread's state, and two warps a scheduler
// where the narrow width-4 kernels have one. Its kernels take 170–255 registers, so an
// SM holds one block, and it is taken where its grid is one wave (wide_width). On an
// H200 (bench/tile_sweep.cu; reports/2026-11-22-h200-parallel_scan_cuda-wide-blocks/),
// at B4 T2048 H16 D128 (128 blocks at width 4), wide against narrow, bf16 / fp32, at
// f7c5ca0: forward 0.435 / 0.406 against 0.468 / 0.512 ms; dv 0.442 / 0.403 against
//   0.469 / 0.516; v·do + dq/dk/dg 1.086 / 1.093 against 1.188 / 1.172.
// Since masked_bf16 (959cbf7) the bf16 column kernels are faster in both geometries
// (forward 0.427 wide, 0.414 narrow; dv 0.422, 0.401), so for them the choice is
// nearly even at this shape; the wide row kernel still wins by 9%.
// At B2 T16384 H16 D128 (128 blocks at width 2) each kernel is 2–14% faster; at B1
// T8192 H96 D128 (192 blocks at width 4: two waves) 15–30% slower, so narrow there.
// Chunks: 8 tokens at width 4 (forward, rows), else 16 — the faster in every case
// measured but the fp32 forward at width 4 (0.403 with 16, 0.406 with 8), where 8
// keeps o's error at 1.29e-7 against 1.47e-7.
struct wide_tiles {
  static constexpr int L = 8;
  static constexpr int THREADS = 256;
  static constexpr int tc_forward(int width) { return width == 4 ? 8 : 16; }
  static constexpr int tc_dv(int) { return 16; }
  static constexpr int tc_rows(int width) { return width == 4 ? 8 : 16; }
};
template <typename Elem>
inline constexpr bool has_wide = !std::is_same_v<Elem, double>;

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

// Blocks of `kernel` an SM of the current device holds at once (registers, shared
// memory); 0 if unknown.
template <auto kernel>
int resident_blocks(int threads, size_t smem_bytes) {
  static per_device known{};
  return remembered(known, [&](int) {
    int n = 0;
    if (allow_shared_memory<kernel>(smem_bytes) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem_bytes) != cudaSuccess)
      return 0;
    return n;
  });
}

// A column-layout kernel variant (the forward, or dv with DV): its grid over V and its
// shared memory.
// C: the compute type (double for the forward's fp64-state fp32 mode).
template <typename Elem, int NL, int L, int THREADS, int CJ, int TC, bool DV, typename C = compute_t<Elem>>
struct column_kernel {
  using stage = chunk_stage<Elem, NL, L, CJ, TC, THREADS, C>;
  static constexpr auto kernel = [] {
    if constexpr (DV)
      return backward_dv_kernel<Elem, NL, L, CJ, TC, THREADS>;
    else
      return forward_kernel<Elem, NL, L, CJ, TC, THREADS, C>;
  }();
  static constexpr int64_t kPerBlock = stage::kColumns;
  static constexpr size_t smem = 2 * stage::kBufferValues * sizeof(typename stage::C);
  static int blocks_per_sm() { return resident_blocks<kernel>(THREADS, smem); }
  static cudaError_t run(const scan_args& a) {
    const dim3 grid(unsigned((a.V + kPerBlock - 1) / kPerBlock), unsigned(a.B * a.H));
    return launch<kernel>(grid, THREADS, smem, a);
  }
};

// A row kernel variant, run after v·do: its grid over K and its shared memory.
template <typename Elem, int NL, int L, int THREADS, int RJ, int TC>
struct row_kernel {
  using stage = row_stage<Elem, NL, L, RJ, TC, THREADS>;
  static constexpr auto kernel = backward_dq_dk_dg_kernel<Elem, NL, L, RJ, TC, THREADS>;
  static constexpr int64_t kPerBlock = stage::kRows;
  static constexpr size_t smem =
      (2 * stage::kBufferValues + stage::kScratchValues) * sizeof(typename stage::C);
  static int blocks_per_sm() { return resident_blocks<kernel>(THREADS, smem); }
  static cudaError_t run(const scan_args& a) {
    const int64_t tokens = a.B * a.T * a.H;  // v·do first: 8 tokens (warps) a block
    if (cudaError_t e = launch<token_dot_kernel<Elem>>(dim3(unsigned((tokens + 7) / 8)), 256, 0, a))
      return e;
    const dim3 grid(unsigned((a.K + kPerBlock - 1) / kPerBlock), unsigned(a.B * a.H));
    return launch<kernel>(grid, THREADS, smem, a);
  }
};

// The two geometries' variants by lanes and width (and the narrow row kernel's
// chunk). GCC 12 fails (internal error) on these types named inside the generic lambdas
// below, so those call function templates that name them.
template <typename Elem, int NL, int CJ>
struct narrow_forward : column_kernel<Elem, NL, tiles<Elem>::L, tiles<Elem>::THREADS, CJ,
                                      tiles<Elem>::tc_columns(CJ), false> {};
template <typename Elem, int NL, int CJ>
struct narrow_dv : column_kernel<Elem, NL, tiles<Elem>::L, tiles<Elem>::THREADS, CJ,
                                 tiles<Elem>::tc_columns(CJ), true> {};
template <typename Elem, int NL, int RJ, int TC>
struct narrow_rows : row_kernel<Elem, NL, tiles<Elem>::L, tiles<Elem>::THREADS, RJ, TC> {};
template <template <typename, int, int> class Variant, typename Elem, int NL, int WIDTH>
cudaError_t run_variant(const scan_args& a) {
  return Variant<Elem, NL, WIDTH>::run(a);
}
template <typename Elem>
struct wide {
  using t = wide_tiles;
  template <int NL, int CJ>
  struct forward : column_kernel<Elem, NL, t::L, t::THREADS, CJ, t::tc_forward(CJ), false> {};
  template <int NL, int CJ>
  struct dv : column_kernel<Elem, NL, t::L, t::THREADS, CJ, t::tc_dv(CJ), true> {};
  template <int NL, int RJ>
  struct rows : row_kernel<Elem, NL, t::L, t::THREADS, RJ, t::tc_rows(RJ)> {};
};

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

// PARALLEL_SCAN_CUDA_STRIP=8 forces the wide geometry wherever the head allows it (fp32
// and bf16, heads ≤ 128; its width from PARALLEL_SCAN_CUDA_WIDTH, 2 or 4, where set),
// 16 the narrow one; 0 when unset. The launch takes the wide geometry only for heads of
// 65–128 (16 lanes, the case measured); forced, heads ≤ 64 run it with 8 lanes, so that
// every committed fixture tests its code. A width forced without a strip keeps the
// narrow geometry (the verify_width_* tests).
int forced_strip() {
  static const int strip = env_choice("PARALLEL_SCAN_CUDA_STRIP", {8, 16});
  return strip;
}

// The wide geometry's width — 4 (W4) or 2 (W2) — for a grid over `owned` columns (rows)
// of `heads` heads, or 0 to keep the narrow geometry. 4 where its grid has ≥ 0.9 blocks
// an SM, 2 where it has ≥ half an SM's worth; either only where the grid is one wave
// (an SM holds one wide block: more waves lost 15–30% at B1 T8192 H96 D128).
template <typename W4, typename W2>
int wide_width(int64_t owned, int64_t heads, int lanes) {
  auto blocks = [&](int64_t per_block) { return (owned + per_block - 1) / per_block * heads; };
  if (const int strip = forced_strip()) {
    const int width = forced_width();
    if (strip != 8 || width == 1) return 0;
    return width ? width : blocks(W4::kPerBlock) >= 0.9 * sm_count() ? 4 : 2;
  }
  const int64_t sms = sm_count();
  if (lanes != 16 || forced_width() || sms == 0) return 0;
  const int64_t blocks4 = blocks(W4::kPerBlock), blocks2 = blocks(W2::kPerBlock);
  if (blocks4 >= 0.9 * double(sms) && blocks4 <= sms * W4::blocks_per_sm()) return 4;
  if (blocks2 >= 0.5 * double(sms) && blocks2 <= sms * W2::blocks_per_sm()) return 2;
  return 0;
}

// Runs Variant<NL, 4> or <NL, 2> of the wide geometry where wide_width picks one;
// nullopt where the narrow geometry stays.
template <template <int, int> class Variant, int NL>
std::optional<cudaError_t> run_wide_with(int64_t owned, const scan_args& a) {
  using W4 = Variant<NL, 4>;
  using W2 = Variant<NL, 2>;
  switch (wide_width<W4, W2>(owned, a.B * a.H, NL)) {
    case 4:
      return W4::run(a);
    case 2:
      return W2::run(a);
  }
  return std::nullopt;
}
// The same with NL twice the narrow geometry's `lanes` (4 or 8).
template <typename Elem, template <int, int> class Variant>
std::optional<cudaError_t> run_wide(int64_t owned, int lanes, const scan_args& a) {
  if constexpr (has_wide<Elem>) {
    if (lanes == 4) return run_wide_with<Variant, 8>(owned, a);
    if (lanes == 8) return run_wide_with<Variant, 16>(owned, a);
  }
  return std::nullopt;
}

// Precise fp32: PARALLEL_SCAN_CUDA_FP32_STATE=64 keeps the fp32 forward's state and o's
// sums in fp64 (chunk_stage's factors from exp_pair), so that o and ht carry little
// more than their own rounding to fp32. On the H200 (2026-11-22, fe3ad2c;
// reports/2026-11-22-h200-parallel_scan_cuda-precise-fp32/):
// - o's rel_l2 at B2 T1024 H4 D128 is 2.5e-8, against 1.48e-7 in fast mode; on every
//   committed fixture it is 1.2–2.6e-8;
// - the price is the fp64 pipe, at half the fp32 rate: at B4 T2048 H16 D128 the forward
//   takes 0.720 ms, against 0.406.
// The backward keeps its fp32 state. Tiles are from the tile sweep's fp32_state64 mode:
// - the wide geometry with 8-token chunks where its grid is one wave: 0.719 ms at the
//   target shape, where 16-long strips take 0.83–1.09;
// - otherwise 16-long strips at width 2 with 8-token chunks: 0.3245 ms at B2 T1024 H4
//   D128, against 0.365 wide.
bool fp32_state64() {
  static const bool on = env_choice("PARALLEL_SCAN_CUDA_FP32_STATE", {64}) == 64;
  return on;
}
template <int NL, int CJ>
struct precise_wide : column_kernel<float, NL, wide_tiles::L, wide_tiles::THREADS, CJ, 8, false, double> {};
template <int NL, int CJ>
struct precise_narrow : column_kernel<float, NL, 16, 128, CJ, 8, false, double> {};
template <int NL>
cudaError_t run_precise_narrow(const scan_args& a) {
  return precise_narrow<NL, 2>::run(a);
}
cudaError_t precise_forward(const scan_args& a) {
  const int lanes = lanes_for(a.K, 16);
  if (const auto wide_run = run_wide<float, precise_wide>(a.V, lanes, a)) return *wide_run;
  return with_lanes(lanes, [&](auto nl) { return run_precise_narrow<nl()>(a); });
}

// One kernel of a layout, reducing over `reduced` (K or V) and owning `owned` (V or K)
// per block: the wide geometry's Wide variant where run_wide picks it, else narrow(nl,
// width) for the narrow geometry's lanes and the width width_for picks (`wide_blocks`:
// the blocks an SM width 4 needs; `allow_one`: whether width 1 may be taken).
template <typename Elem, template <int, int> class Wide, typename Narrow>
cudaError_t run_layout(int64_t reduced, int64_t owned, double wide_blocks, bool allow_one,
                       const scan_args& a, Narrow&& narrow) {
  using t = tiles<Elem>;
  const int lanes = lanes_for(reduced, t::L);
  if (const auto wide_run = run_wide<Elem, Wide>(owned, lanes, a)) return *wide_run;
  const int width =
      width_for(owned, a.B * a.H, lanes, t::THREADS, t::MAX_WIDTH, wide_blocks, allow_one);
  return with_lanes(lanes, [&](auto nl) {
    return with_width<Elem>(width, [&](auto w) { return narrow(nl, w); });
  });
}

template <typename Elem>
cudaError_t forward_for(const scan_args& a) {
  if constexpr (std::is_same_v<Elem, float>)
    if (fp32_state64()) return precise_forward(a);
  return run_layout<Elem, wide<Elem>::template forward>(
      a.K, a.V, tiles<Elem>::WIDE_COLUMNS, false, a, [&](auto nl, auto cj) {
        if constexpr (cj() == 1)
          return cudaErrorInvalidValue;  // the forward never takes width 1
        else
          return run_variant<narrow_forward, Elem, nl(), cj()>(a);
      });
}

template <typename Elem>
cudaError_t backward_dv_for(const scan_args& a) {
  return run_layout<Elem, wide<Elem>::template dv>(
      a.K, a.V, tiles<Elem>::WIDE_COLUMNS, true, a,
      [&](auto nl, auto cj) { return run_variant<narrow_dv, Elem, nl(), cj()>(a); });
}

// The narrow row kernel of NL lanes and width RJ.
template <typename Elem, int NL, int RJ>
cudaError_t narrow_rows_run(const scan_args& a) {
  using t = tiles<Elem>;
  constexpr int tc = t::tc_rows(RJ, false), tc_crowded = t::tc_rows(RJ, true);
  using shorter = narrow_rows<Elem, NL, RJ, tc>;
  if constexpr (tc_crowded != tc) {
    const int64_t row_blocks = (a.K + shorter::kPerBlock - 1) / shorter::kPerBlock * a.B * a.H;
    // The longer chunks where ~2 or more blocks share an SM and they take no more waves
    // than the shorter chunks' smaller blocks (B1 T8192 H96 D128: 384 blocks are one
    // wave at 3 blocks an SM, two at 2).
    using longer = narrow_rows<Elem, NL, RJ, tc_crowded>;
    const int64_t sms = sm_count();
    const int64_t per_sm_long = longer::blocks_per_sm(), per_sm_short = shorter::blocks_per_sm();
    auto waves = [&](int64_t per_sm) { return (row_blocks + per_sm * sms - 1) / (per_sm * sms); };
    const bool crowded = forced_row_chunk()
                             ? forced_row_chunk() == 16
                             : sms > 0 && per_sm_long > 0 && per_sm_short > 0 &&
                                   double(row_blocks) >= 1.5 * double(sms) &&
                                   waves(per_sm_long) <= waves(per_sm_short);
    if (crowded) return longer::run(a);
  }
  return shorter::run(a);
}

template <typename Elem>
cudaError_t backward_rows_for(const scan_args& a) {
  return run_layout<Elem, wide<Elem>::template rows>(
      a.V, a.K, tiles<Elem>::WIDE_ROWS, true, a,
      [&](auto nl, auto rj) { return narrow_rows_run<Elem, nl(), rj()>(a); });
}

// dv and dh0 (column layout over K), then dq, dk, dg (row layout over V).
template <typename Elem>
cudaError_t backward_for(const scan_args& a) {
  if (cudaError_t e = backward_dv_for<Elem>(a)) return e;
  return backward_rows_for<Elem>(a);
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
