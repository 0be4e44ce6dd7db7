// The fp32/fp64 chunk walk's shared-memory tile layout: which element of a tile row an
// (row, column) index lands on. Plain C++: the kernels use it, and the CPU test
// tests/walk_fp_swizzle_test.cpp checks its bank claims.
#pragma once

#ifdef __CUDACC__
#define GLABENCH_SWZ_HD __host__ __device__ __forceinline__
#else
#define GLABENCH_SWZ_HD inline
#endif

namespace glabench::chunked::walk_fp {

// Element (row, col) of a tile of COLS-element rows, XOR-swizzled so that a warp's
// fragment loads (mma.cuh) read 32 different banks whether the tile is read as
// stored (rows g = lane/4, columns c = lane%4) or transposed (rows c, columns g), and an
// ldmatrix's eight 16-byte rows land in eight different bank groups:
//   fp32: col ^ (8·(row%4) + 4·((row/4)%2)) within 32-column blocks;
//   fp64: col ^ 4·(row%4) within 16-column blocks (a 64-bit access is two half-warp
//         phases).
// 16-byte groups (4 floats, 2 doubles) stay whole, so cp.async fills the tiles.
template <class T, int COLS>
GLABENCH_SWZ_HD int swz(int row, int col) {
  if constexpr (sizeof(T) == 4) {
    static_assert(COLS % 32 == 0, "fp32 tiles of whole 32-column blocks");
    return row * COLS + (col ^ (((row & 3) << 3) | (row & 4)));
  } else {
    static_assert(COLS % 16 == 0, "fp64 tiles of whole 16-column blocks");
    return row * COLS + (col ^ ((row & 3) << 2));
  }
}

// The same fp32 offsets in a 128-column tile, split for the pipelined walk's fragment
// loads (../forward_fp32_3xtf32.cuh) into a part fixed for the lane (g = lane/4,
// c = lane%4), computed once, and a part fixed at compile time (the load's immediate):
//   a key fragment, rows 8·r8 + c (+4 if `low`), columns 8j + g:
//     swz(8·r8 + c + 4·low, 8j + g) = swz_key_lane(g, c, j%4, low) + 1024·r8 + 32·(j/4)
//   a q̃ pair, row 8·r8 + g, columns 8j + 2c and the next:
//     swz(8·r8 + g, 8j + 2c)        = swz_pair_lane(g, c, j%4) + 1024·r8 + 32·(j/4)
// (c < 4 fixes the row's XOR, g < 8 keeps it off the tile index j.)
GLABENCH_SWZ_HD int swz_key_lane(int g, int c, int jj, bool low) {
  return (c + (low ? 4 : 0)) * 128 + 8 * (jj ^ c) + (low ? g ^ 4 : g);
}
GLABENCH_SWZ_HD int swz_pair_lane(int g, int c, int jj) {
  return g * 128 + 8 * (jj ^ (g & 3)) + (2 * c ^ (g & 4));
}

}  // namespace glabench::chunked::walk_fp
