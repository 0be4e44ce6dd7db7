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
// covers; the walk's column v of piece m at row `row`, null past the tiles.
template <class T, class In>
__device__ __forceinline__ T* piece_state(const args<T, In>& a, int piece, int row, int v) {
  constexpr int BV = sizes<T>::BV, KP = sizes<T>::KP;
  const int slabs = (a.V + BV - 1) / BV;
  if (v >= slabs * BV) return nullptr;
  return a.dstate +
         ((static_cast<int64_t>(piece) * gridDim.y + blockIdx.y) * slabs + v / BV) * KP * BV +
         row * BV + v % BV;
}
template <class T, class In>
__device__ __forceinline__ double* split_gate(const args<T, In>& a, int piece) {
  return a.dgate + (static_cast<int64_t>(piece) * gridDim.y + blockIdx.y) * sizes<T>::KP;
}
// S ← 2^{dgate}·S + dstate across piece m (either walk's state layout; the block's columns
// from v0).
template <class T, class In, class St>
__device__ __forceinline__ void fp_carry_over_piece(const args<T, In>& a, int m, St& S, int v0,
                                                    int warp, int lane) {
  const double* dg = split_gate(a, m);
  for_each_state(S, warp, lane, [&](T& s, int row, int col) {
    const T* ds = piece_state(a, m, row, v0 + col);
    s = ds ? exp2_of<T>(dg[row]) * s + *ds : exp2_of<T>(dg[row]) * s;
  });
}
// The state before a walk's span (either walk's state layout): zero in the first pass
// (kStates); in the walk, h0 carried over the first pass's pieces before the segment.
template <bool kStates, class T, class In, class St>
__device__ __forceinline__ void fp_state_before_span(const args<T, In>& a, St& S, int v0, int warp,
                                                     int lane) {
  fp_load_state(kStates ? nullptr : a.h0, a, S, v0, warp, lane);
  for (int m = 0; m < (kStates ? 0 : blockIdx.z * a.subs); ++m)
    fp_carry_over_piece(a, m, S, v0, warp, lane);
}
// The first pass's piece: its state into the split's workspace.
template <class T, class In, class St>
__device__ __forceinline__ void fp_store_piece(const args<T, In>& a, int piece, const St& S, int v0,
                                               int warp, int lane) {
  for_each_state(S, warp, lane, [&](const T& s, int row, int col) {
    if (T* ds = piece_state(a, piece, row, v0 + col)) *ds = s;
  });
}

}  // namespace glabench::chunked::walk_fp
