// Tile sizes of the kernels, in two geometries: the narrow one (tiles<Elem>: strips of
// 16, 128 threads) for every dtype and head, and the wide one (wide_tiles: strips of 8,
// 256 threads) for fp32, bf16 and fp16 heads of at most 128. Each choice was timed against
// its alternatives with bench/tile_sweep.cu; the figures are in README.md.
//
// WIDTH is the number of value columns (forward, dv) or key rows (dq, dk, dg) a thread
// owns. Width 4 halves the shared-memory loads per FMA against width 2 but halves the
// block count, so it pays only when the width-4 grid still fills the GPU (width_for in
// launch.cuh, with WIDE_COLUMNS and WIDE_ROWS below): where it leaves SMs idle, width 2
// wins.
//
// TC is the number of tokens per staged chunk. Longer chunks spread a chunk's barrier
// and staging setup over more tokens, but their per-token partial sums take registers,
// which can cost blocks per SM or spill. Keeping two or three chunks' loads in flight
// was slower everywhere: the registers it takes cost more than the latency it hides.
#pragma once

#include <cuda_bf16.h>

#include <type_traits>

#include "scan_args.hpp"

namespace glabench::parallel_scan {

// The narrow geometry, for bf16 and fp16; fp32 and fp64 differ as specialised below.
template <typename Elem>
struct tiles {
  static constexpr int L = 16;  // strip length along the reduced axis
  static constexpr int THREADS = 128;
  static constexpr int MAX_WIDTH = 4;  // columns or rows a thread owns, at most
  // Tokens per staged chunk, by width: row kernel, forward and dv kernels.
  //
  // The row kernel takes 16-token chunks only at width 2 and only where its grid is
  // `crowded` (narrow_rows_run in launch.cuh): they take about 255 registers against 168,
  // so an SM holds 2 blocks instead of 3. That pays where the grid puts about 2 or more
  // blocks on an SM anyway and needs no more waves than with 8-token chunks; with one
  // block an SM, or with an extra wave, the 8-token chunks are faster. Widths 1 and 4
  // take 8 (at width 4, 16-token chunks spill).
  static constexpr int tc_rows(int width, bool crowded) { return width == 2 && crowded ? 16 : 8; }
  static constexpr int tc_columns(int) { return 8; }
  // Blocks per SM the width-4 grid must have for width 4 to be chosen: forward and dv,
  // rows.
  static constexpr double WIDE_COLUMNS = 0.9, WIDE_ROWS = 2.0;
};

// fp32: the column kernels take 16-token chunks at width 2, where they are faster than
// 8 at the shapes timed; width 4 keeps 8.
template <>
struct tiles<float> : tiles<__nv_bfloat16> {
  static constexpr int tc_columns(int width) { return width == 4 ? 8 : 16; }
  // fp32 at width 2 with 16-token chunks (about 218 registers) fits 2 blocks an SM, so
  // past about 1.2 width-4 blocks an SM the width-2 grid needs a second wave, and width
  // 4 wins only from there.
  static constexpr double WIDE_COLUMNS = 1.2;
};

// fp64 (correctness, not a speed target): width ≤ 2 and 4-token chunks, so that its
// doubles stay in registers.
template <>
struct tiles<double> : tiles<__nv_bfloat16> {
  static constexpr int MAX_WIDTH = 2;
  static constexpr int tc_rows(int, bool) { return 4; }
  static constexpr int tc_columns(int) { return 4; }
};

// The wide geometry (fp32, bf16 and fp16, heads of at most 128): strips of 8 and 256 threads,
// so twice the lanes of the narrow geometry and the same columns (rows) per block — the
// same grid with half of each thread's state, and two warps a scheduler where the
// narrow width-4 kernels have one.
// Its kernels take 170–255 registers, so an SM holds one block, and the launch takes
// it only where its grid is one wave (wide_width in launch.cuh): with a second wave it
// loses to the narrow geometry.
//
// Chunks: 8 tokens at width 4 (forward, rows), else 16. For the fp32 forward at width 4
// the two are about as fast, and 8 gives the lower error in o.
struct wide_tiles {
  static constexpr int L = 8;
  static constexpr int THREADS = 256;
  static constexpr int tc_forward(int width) { return width == 4 ? 8 : 16; }
  static constexpr int tc_dv(int) { return 16; }
  static constexpr int tc_rows(int width) { return width == 4 ? 8 : 16; }
  // Blocks an SM the width-2 grid needs (launch.cuh: wide_width): half an SM's worth for
  // gla; 0.45 for rwkv6, whose seed shape B4 T1024 H4 D100 makes 64 blocks on the H200's
  // 132 SMs: there, bf16, wide width 2 took 0.177 ms forward and 0.783 ms
  // forward+backward against the narrow kernels' 0.190 and 0.818 (H200, 2026-11-23,
  // reports/2026-11-23-h200-fused_recurrent_rwkv6_cuda/sweep).
  static constexpr double min_blocks_width2(recurrence op) {
    return op == recurrence::rwkv6 ? 0.45 : 0.5;
  }
};

// Whether the launch has the wide geometry for Elem: not for fp64, which is not a speed
// target and is not tuned.
template <typename Elem>
inline constexpr bool has_wide = !std::is_same_v<Elem, double>;

}  // namespace glabench::parallel_scan
