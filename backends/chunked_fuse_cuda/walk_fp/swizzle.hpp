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
// fragment loads (walk_fp/mma.cuh) read 32 different banks whether the tile is read as
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

}  // namespace glabench::chunked::walk_fp
