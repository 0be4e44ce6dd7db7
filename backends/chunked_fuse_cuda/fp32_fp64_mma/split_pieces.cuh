// The sequence split's pieces in the fp32 and fp64 walks (walk_plan.hpp), as in the bf16
// ones (../bf16_mma/split_pieces.cuh): where a piece's state tile and summed gates lie in
// the workspace, a segment's state carried across the pieces before it, and a first-pass
// piece's state stored. fp64's walk (forward_fp64_dmma.cuh) and fp32's pipelined one
// (forward_fp32_3xtf32.cuh) share them.
#pragma once

#include "stage1_decay_cumsum.cuh"
#include "stage3_state.cuh"

namespace glabench::chunked::walk_fp {

// A piece's state tile and summed gates in the split's workspace.
template <class T, class In>
__device__ __forceinline__ T* split_state(const args<T, In>& a, int piece) {
  using Z = sizes<T>;
  return a.dstate +
         ((static_cast<int64_t>(piece) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * Z::KP *
             Z::BV;
}
template <class T, class In>
__device__ __forceinline__ double* split_gate(const args<T, In>& a, int piece) {
  return a.dgate + (static_cast<int64_t>(piece) * gridDim.y + blockIdx.y) * sizes<T>::KP;
}
// S ← 2^{dgate}·S + dstate across piece m (either walk's state layout).
template <class T, class In, class St>
__device__ __forceinline__ void fp_carry_over_piece(const args<T, In>& a, int m, St& S, int warp,
                                                    int lane) {
  const T* ds = split_state(a, m);
  const double* dg = split_gate(a, m);
  for_each_state(S, warp, lane, [&](T& s, int row, int col) {
    s = exp2_of<T>(dg[row]) * s + ds[row * sizes<T>::BV + col];
  });
}
// The state before a walk's span (either walk's state layout): zero in the first pass
// (kStates); in the walk, h0 carried over the first pass's pieces before the segment.
template <bool kStates, class T, class In, class St>
__device__ __forceinline__ void fp_state_before_span(const args<T, In>& a, St& S, int warp,
                                                     int lane) {
  fp_load_state(kStates ? nullptr : a.h0, a, S, warp, lane);
  for (int m = 0; m < (kStates ? 0 : blockIdx.z * a.subs); ++m)
    fp_carry_over_piece(a, m, S, warp, lane);
}
// The first pass's piece: its state into the split's workspace.
template <class T, class In, class St>
__device__ __forceinline__ void fp_store_piece(const args<T, In>& a, int piece, const St& S,
                                               int warp, int lane) {
  T* ds = split_state(a, piece);
  for_each_state(S, warp, lane,
                 [&](const T& s, int row, int col) { ds[row * sizes<T>::BV + col] = s; });
}

}  // namespace glabench::chunked::walk_fp
