// The sequence split's pieces in the fp32 and fp64 walks (walk_plan.hpp), as in the bf16
// ones (../bf16_mma/split_pieces.cuh): where a piece's state tile and summed gates lie in
// the workspace, a segment's state carried across the pieces before it, and a first-pass
// piece's state stored. fp64's walk (forward_fp64_dmma.cuh) and fp32's pipelined one
// (forward_fp32_3xtf32.cuh) share them.
#pragma once

#include "stage1_decay_cumsum.cuh"
#include "stage3_state.cuh"

namespace glabench::chunked::walk_fp {

// Where a piece's state and summed gates lie in the split's workspace: the state in tiles
// of sizes<T>::BV columns, (V + BV − 1)/BV a head (walk_plan.hpp), whatever columns a block
// covers. A warp's columns lie in one tile (they are 16 from a multiple of 16): piece_cols
// names it and the shift from a column of the block to its column in the tile, given the
// block's first V column v0 and the warp's first column in the block; one tile pointer a
// warp keeps the elements' addresses a constant apart.
struct piece_cols {
  int slab, shift;
};
template <class T>
__device__ __forceinline__ piece_cols piece_cols_of(int v0, int warp_col0) {
  constexpr int BV = sizes<T>::BV;
  const int v = v0 + warp_col0;
  return {v / BV, v % BV - warp_col0};
}
// Piece m's tile `slab`; null past the head's tiles, where a block is wider than a tile
// (kWide: fp32's 128-column blocks) and so may reach past them.
template <bool kWide, class T, class In>
__device__ __forceinline__ T* piece_tile(const args<T, In>& a, int piece, int slab) {
  constexpr int BV = sizes<T>::BV, KP = sizes<T>::KP;
  const int slabs = (a.V + BV - 1) / BV;
  if (kWide && slab >= slabs) return nullptr;
  return a.dstate +
         ((static_cast<int64_t>(piece) * gridDim.y + blockIdx.y) * slabs + slab) * KP * BV;
}
template <class T, class In>
__device__ __forceinline__ double* split_gate(const args<T, In>& a, int piece) {
  return a.dgate + (static_cast<int64_t>(piece) * gridDim.y + blockIdx.y) * sizes<T>::KP;
}
// S ← 2^{dgate}·S + dstate across piece m (either walk's state layout), the warp's columns
// at `at`; past the tiles (beyond V) the state only decays.
template <bool kWide, class T, class In, class St>
__device__ __forceinline__ void fp_carry_over_piece(const args<T, In>& a, int m, St& S,
                                                    piece_cols at, int warp, int lane) {
  const double* dg = split_gate(a, m);
  const T* tile = piece_tile<kWide>(a, m, at.slab);
  if (kWide && !tile) {
    for_each_state(S, warp, lane, [&](T& s, int row, int) { s = exp2_of<T>(dg[row]) * s; });
    return;
  }
  const T* ds = tile + at.shift;
  for_each_state(S, warp, lane, [&](T& s, int row, int col) {
    s = exp2_of<T>(dg[row]) * s + ds[row * sizes<T>::BV + col];
  });
}
// The state before a walk's span (either walk's state layout; the block's first V column
// v0, the warp's first column in the block warp_col0): zero in the first pass (kStates); in
// the walk, h0 carried over the first pass's pieces before the segment.
template <bool kStates, bool kWide, class T, class In, class St>
__device__ __forceinline__ void fp_state_before_span(const args<T, In>& a, St& S, int v0,
                                                     int warp_col0, int warp, int lane) {
  fp_load_state(kStates ? nullptr : a.h0, a, S, v0, warp, lane);
  const piece_cols at = piece_cols_of<T>(v0, warp_col0);
  for (int m = 0; m < (kStates ? 0 : blockIdx.z * a.subs); ++m)
    fp_carry_over_piece<kWide>(a, m, S, at, warp, lane);
}
// The first pass's piece: its state into the split's workspace (none past the tiles).
template <bool kWide, class T, class In, class St>
__device__ __forceinline__ void fp_store_piece(const args<T, In>& a, int piece, const St& S, int v0,
                                               int warp_col0, int warp, int lane) {
  const piece_cols at = piece_cols_of<T>(v0, warp_col0);
  T* tile = piece_tile<kWide>(a, piece, at.slab);
  if (kWide && !tile) return;
  T* ds = tile + at.shift;
  for_each_state(S, warp, lane,
                 [&](const T& s, int row, int col) { ds[row * sizes<T>::BV + col] = s; });
}

}  // namespace glabench::chunked::walk_fp
