// The launch's dispatch: for each call it picks a kernel variant — the geometry (narrow
// or wide), the lane count NL from the head size (a compile-time variant per power of
// two, masks for the rest), the width and the chunk — and runs it. What it picks from:
// tile sizes in tiles.cuh, grids and shared memory in kernel_variants.cuh, the GPU's SM
// count and occupancy in occupancy.cuh, the environment variables that force a choice in
// knobs.hpp. The same dispatch serves both recurrences (OP); each backend instantiates
// its own in one .cu file (instantiate_launch below), so that each compiles only its
// kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <optional>
#include <type_traits>

#include "decode_kernel.cuh"
#include "kernel_variants.cuh"
#include "knobs.hpp"
#include "occupancy.cuh"
#include "scan_args.hpp"
#include "tiles.cuh"

namespace glabench::parallel_scan {
namespace {

// At least 4 lanes: fewer would put hundreds of columns in one block and its staging
// would not fit in registers; small heads are masked instead.
int lanes_for(int64_t head_size, int L) {
  int lanes = 4;
  while (lanes * L < head_size) lanes *= 2;
  return lanes;
}

// The two geometries' variants by lanes and width (and the narrow row kernel's
// chunk). GCC 12 fails (internal error) on these types named inside the generic lambdas
// below, so those call function templates that name them.
template <recurrence OP>
struct narrow {
  template <typename Elem, int NL, int CJ>
  struct forward : column_kernel<OP, Elem, NL, tiles<Elem>::L, tiles<Elem>::THREADS, CJ,
                                 tiles<Elem>::tc_columns(CJ), false> {};
  template <typename Elem, int NL, int CJ>
  struct dv : column_kernel<OP, Elem, NL, tiles<Elem>::L, tiles<Elem>::THREADS, CJ,
                            tiles<Elem>::tc_columns(CJ), true> {};
  template <typename Elem, int NL, int RJ, int TC>
  struct rows : row_kernel<OP, Elem, NL, tiles<Elem>::L, tiles<Elem>::THREADS, RJ, TC> {};
};
template <template <typename, int, int> class Variant, typename Elem, int NL, int WIDTH>
cudaError_t run_variant(const scan_args& a) {
  return Variant<Elem, NL, WIDTH>::run(a);
}
template <recurrence OP, typename Elem>
struct wide {
  using t = wide_tiles;
  template <int NL, int CJ>
  struct forward : column_kernel<OP, Elem, NL, t::L, t::THREADS, CJ, t::tc_forward(CJ), false> {};
  template <int NL, int CJ>
  struct dv : column_kernel<OP, Elem, NL, t::L, t::THREADS, CJ, t::tc_dv(CJ), true> {};
  template <int NL, int RJ>
  struct rows : row_kernel<OP, Elem, NL, t::L, t::THREADS, RJ, t::tc_rows(RJ)> {};
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

// How many columns (rows) a thread owns in the narrow geometry: 4 when that grid has at
// least `wide` blocks per SM (tiles.cuh: WIDE_COLUMNS, WIDE_ROWS); else 2; the backward
// drops to 1 when 2 would leave more than half the SMs idle (small B·H), so that twice
// the blocks share the work. Where width 2 fills half the GPU, width 1 is slower: as
// width 4 against 2, width 2 halves the shared-memory loads per FMA against 1. A width
// forced by PARALLEL_SCAN_CUDA_WIDTH (knobs.hpp) is capped at `max_width`, and 1 becomes
// 2 where `allow_one` is false (the forward).
template <recurrence OP>
int width_for(int64_t owned, int64_t heads, int lanes, int threads, int max_width, double wide,
              bool allow_one) {
  if (const int forced = forced_width<OP>())
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

// The wide geometry's width — 4 (W4) or 2 (W2) — for a grid over `owned` columns (rows)
// of `heads` heads, or 0 to keep the narrow geometry. 4 where its grid has ≥ 0.9 blocks
// an SM, 2 where it has ≥ half an SM's worth (rwkv6: 0.45, tiles.cuh); either only where
// the grid is one wave:
// an SM holds one wide block, and with a second wave the narrow geometry is faster.
// PARALLEL_SCAN_CUDA_STRIP (knobs.hpp) forces either geometry.
template <recurrence OP, typename W4, typename W2>
int wide_width(int64_t owned, int64_t heads, int lanes) {
  auto blocks = [&](int64_t per_block) { return (owned + per_block - 1) / per_block * heads; };
  if (const int strip = forced_strip<OP>()) {
    const int width = forced_width<OP>();
    if (strip != 8 || width == 1) return 0;
    return width ? width : blocks(W4::kPerBlock) >= 0.9 * sm_count() ? 4 : 2;
  }
  const int64_t sms = sm_count();
  if (lanes != 16 || forced_width<OP>() || sms == 0) return 0;
  const int64_t blocks4 = blocks(W4::kPerBlock), blocks2 = blocks(W2::kPerBlock);
  if (blocks4 >= 0.9 * double(sms) && blocks4 <= sms * W4::blocks_per_sm()) return 4;
  if (blocks2 >= wide_tiles::min_blocks_width2(OP) * double(sms) &&
      blocks2 <= sms * W2::blocks_per_sm())
    return 2;
  return 0;
}

// Runs Variant<NL, 4> or <NL, 2> of the wide geometry where wide_width picks one;
// nullopt where the narrow geometry stays.
template <recurrence OP, template <int, int> class Variant, int NL>
std::optional<cudaError_t> run_wide_with(int64_t owned, const scan_args& a) {
  using W4 = Variant<NL, 4>;
  using W2 = Variant<NL, 2>;
  switch (wide_width<OP, W4, W2>(owned, a.B * a.H, NL)) {
    case 4:
      return W4::run(a);
    case 2:
      return W2::run(a);
  }
  return std::nullopt;
}
// The same with NL twice the narrow geometry's `lanes` (4 or 8).
template <recurrence OP, typename Elem, template <int, int> class Variant>
std::optional<cudaError_t> run_wide(int64_t owned, int lanes, const scan_args& a) {
  if constexpr (has_wide<Elem>) {
    if (lanes == 4) return run_wide_with<OP, Variant, 8>(owned, a);
    if (lanes == 8) return run_wide_with<OP, Variant, 16>(owned, a);
  }
  return std::nullopt;
}

// Precise fp32 (PARALLEL_SCAN_CUDA_FP32_STATE=64, knobs.hpp): the fp32 forward with
// its state and o's sums in fp64; the backward keeps its fp32 state. Its tiles are the
// faster ones of the tile sweep's fp32_state64 mode: the wide geometry with 8-token
// chunks where its grid is one wave, otherwise 16-long strips at width 2 with 8-token
// chunks.
template <recurrence OP>
struct precise {
  template <int NL, int CJ>
  struct wide
      : column_kernel<OP, float, NL, wide_tiles::L, wide_tiles::THREADS, CJ, 8, false, double> {};
  template <int NL, int CJ>
  struct narrow : column_kernel<OP, float, NL, 16, 128, CJ, 8, false, double> {};
};
template <recurrence OP, int NL>
cudaError_t run_precise_narrow(const scan_args& a) {
  return precise<OP>::template narrow<NL, 2>::run(a);
}
template <recurrence OP>
cudaError_t precise_forward(const scan_args& a) {
  const int lanes = lanes_for(a.K, 16);
  if (const auto wide_run = run_wide<OP, float, precise<OP>::template wide>(a.V, lanes, a))
    return *wide_run;
  return with_lanes(lanes, [&](auto nl) { return run_precise_narrow<OP, nl()>(a); });
}

// One kernel of a layout, reducing over `reduced` (K or V) and owning `owned` (V or K)
// per block: the wide geometry's Wide variant where run_wide picks it, else narrow(nl,
// width) for the narrow geometry's lanes and the width width_for picks (`wide_blocks`:
// the blocks an SM width 4 needs; `allow_one`: whether width 1 may be taken).
template <recurrence OP, typename Elem, template <int, int> class Wide, typename Narrow>
cudaError_t run_layout(int64_t reduced, int64_t owned, double wide_blocks, bool allow_one,
                       const scan_args& a, Narrow&& narrow) {
  using t = tiles<Elem>;
  const int lanes = lanes_for(reduced, t::L);
  if (const auto wide_run = run_wide<OP, Elem, Wide>(owned, lanes, a)) return *wide_run;
  const int width =
      width_for<OP>(owned, a.B * a.H, lanes, t::THREADS, t::MAX_WIDTH, wide_blocks, allow_one);
  return with_lanes(lanes, [&](auto nl) {
    return with_width<Elem>(width, [&](auto w) { return narrow(nl, w); });
  });
}

// One-token forwards take the decode kernel, unless a knob asks for a scan kernel (a
// forced width or geometry, or precise fp32, which the decode kernel's fp32 state is
// not): results record the knobs, so the kernel that ran must be the one they name.
template <recurrence OP, typename Elem>
bool takes_decode(const scan_args& a) {
  if (!decodes(a) || forced_width<OP>() || forced_strip<OP>()) return false;
  if constexpr (std::is_same_v<Elem, float>) return !fp32_state64<OP>();
  return true;
}

template <recurrence OP, typename Elem>
cudaError_t forward_for(const scan_args& a) {
  if (takes_decode<OP, Elem>(a)) return run_decode<OP, Elem>(a, forced_decode_registers<OP>());
  if constexpr (std::is_same_v<Elem, float>)
    if (fp32_state64<OP>()) return precise_forward<OP>(a);
  return run_layout<OP, Elem, wide<OP, Elem>::template forward>(
      a.K, a.V, tiles<Elem>::WIDE_COLUMNS, false, a, [&](auto nl, auto cj) {
        if constexpr (cj() == 1)
          return cudaErrorInvalidValue;  // the forward never takes width 1
        else
          return run_variant<narrow<OP>::template forward, Elem, nl(), cj()>(a);
      });
}

template <recurrence OP, typename Elem>
cudaError_t backward_dv_for(const scan_args& a) {
  return run_layout<OP, Elem, wide<OP, Elem>::template dv>(
      a.K, a.V, tiles<Elem>::WIDE_COLUMNS, true, a,
      [&](auto nl, auto cj) { return run_variant<narrow<OP>::template dv, Elem, nl(), cj()>(a); });
}

// The narrow row kernel of NL lanes and width RJ.
template <recurrence OP, typename Elem, int NL, int RJ>
cudaError_t narrow_rows_run(const scan_args& a) {
  using t = tiles<Elem>;
  constexpr int tc = t::tc_rows(RJ, false), tc_crowded = t::tc_rows(RJ, true);
  using shorter = typename narrow<OP>::template rows<Elem, NL, RJ, tc>;
  if constexpr (tc_crowded != tc) {
    const int64_t row_blocks = (a.K + shorter::kPerBlock - 1) / shorter::kPerBlock * a.B * a.H;
    // The longer chunks where ~2 or more blocks share an SM and they take no more waves
    // than the shorter chunks, of which an SM holds more blocks (e.g. 384 blocks on 132
    // SMs are one wave at 3 blocks an SM, two at 2; tiles.cuh: tc_rows).
    // PARALLEL_SCAN_CUDA_ROW_CHUNK (knobs.hpp) forces either.
    using longer = typename narrow<OP>::template rows<Elem, NL, RJ, tc_crowded>;
    const int64_t sms = sm_count();
    const int64_t per_sm_long = longer::blocks_per_sm(), per_sm_short = shorter::blocks_per_sm();
    auto waves = [&](int64_t per_sm) { return (row_blocks + per_sm * sms - 1) / (per_sm * sms); };
    const bool crowded = forced_row_chunk<OP>() ? forced_row_chunk<OP>() == 16
                                                : sms > 0 && per_sm_long > 0 && per_sm_short > 0 &&
                                                      double(row_blocks) >= 1.5 * double(sms) &&
                                                      waves(per_sm_long) <= waves(per_sm_short);
    if (crowded) return longer::run(a);
  }
  return shorter::run(a);
}

template <recurrence OP, typename Elem>
cudaError_t backward_rows_for(const scan_args& a) {
  return run_layout<OP, Elem, wide<OP, Elem>::template rows>(
      a.V, a.K, tiles<Elem>::WIDE_ROWS, true, a,
      [&](auto nl, auto rj) { return narrow_rows_run<OP, Elem, nl(), rj()>(a); });
}

// dv and dh0 (column layout over K), then dq, dk, dg (and rwkv6's du; row layout over V).
template <recurrence OP, typename Elem>
cudaError_t backward_for(const scan_args& a) {
  if (cudaError_t e = backward_dv_for<OP, Elem>(a)) return e;
  return backward_rows_for<OP, Elem>(a);
}

}  // namespace

template <recurrence OP>
cudaError_t launch_forward(storage s, const scan_args& a) {
  switch (s) {
    case storage::fp64:
      return forward_for<OP, double>(a);
    case storage::fp32:
      return forward_for<OP, float>(a);
    case storage::bf16:
      return forward_for<OP, __nv_bfloat16>(a);
    case storage::fp16:
      return forward_for<OP, __half>(a);
  }
  return cudaErrorInvalidValue;
}

template <recurrence OP>
cudaError_t launch_backward(storage s, const scan_args& a) {
  switch (s) {
    case storage::fp64:
      return backward_for<OP, double>(a);
    case storage::fp32:
      return backward_for<OP, float>(a);
    case storage::bf16:
      return backward_for<OP, __nv_bfloat16>(a);
    case storage::fp16:
      return backward_for<OP, __half>(a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace glabench::parallel_scan
