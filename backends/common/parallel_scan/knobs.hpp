// The environment variables that force the launch's choices. The launch picks a kernel
// variant from the head size, the grid and the GPU, so the small committed fixtures
// would reach only a few of the variants; the tests set these to verify every one of
// them. Each backend has its own names: PARALLEL_SCAN_CUDA_* for gla,
// FUSED_RECURRENT_RWKV6_CUDA_* for rwkv6 (results files record a backend's variables by
// its name). Each is read once per process; unset, or set to a value it does not allow,
// it forces nothing.
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <string>

#include "scan_args.hpp"

namespace glabench::parallel_scan {

// The integer in environment variable `name` if it is one of `allowed`, else 0.
inline int env_choice(const char* name, std::initializer_list<int> allowed) {
  const char* env = std::getenv(name);
  const int value = env ? std::atoi(env) : 0;
  for (const int choice : allowed)
    if (value == choice) return value;
  return 0;
}

// The variable `<BACKEND>_<suffix>` of the backend that runs recurrence OP.
template <recurrence OP>
int knob(const char* suffix, std::initializer_list<int> allowed) {
  const std::string prefix =
      OP == recurrence::gla ? "PARALLEL_SCAN_CUDA_" : "FUSED_RECURRENT_RWKV6_CUDA_";
  return env_choice((prefix + suffix).c_str(), allowed);
}

// <BACKEND>_WIDTH = 1, 2 or 4: the columns (rows) a thread owns, capped at the dtype's
// largest (tiles::MAX_WIDTH); the forward, which has no width 1, takes 2. Without
// <BACKEND>_STRIP it keeps the narrow geometry (the verify_width_* tests). 0 when unset.
template <recurrence OP>
int forced_width() {
  static const int width = knob<OP>("WIDTH", {1, 2, 4});
  return width;
}

// <BACKEND>_ROW_CHUNK = 8 or 16: the row kernel's tokens per chunk where its width
// offers both (width 2), so that tests reach both width-2 row kernels: the launch takes
// 16 only for crowded grids, which small fixtures never make. 0 when unset.
template <recurrence OP>
int forced_row_chunk() {
  static const int chunk = knob<OP>("ROW_CHUNK", {8, 16});
  return chunk;
}

// <BACKEND>_STRIP = 8: the wide geometry wherever the head allows it (fp32 and bf16,
// heads ≤ 128), at the width <BACKEND>_WIDTH forces (2 or 4) where set; 16: the narrow
// geometry. The launch takes the wide geometry only for heads of 65–128 (16 lanes, the
// case measured); forced, heads ≤ 64 run it with 8 lanes, so that every committed
// fixture tests its code. 0 when unset.
template <recurrence OP>
int forced_strip() {
  static const int strip = knob<OP>("STRIP", {8, 16});
  return strip;
}

// <BACKEND>_DECODE_REGISTERS = 1: one-token forwards with fp32 states take the register
// decode kernel (decode_kernel.cuh) rather than the bulk-copy one, so that tests reach
// it at every fixture and a bench can set the two side by side. false when unset.
// (chunked_fuse_cuda, which also runs the decode kernels, reads no such variable.)
template <recurrence OP>
bool forced_decode_registers() {
  static const bool on = knob<OP>("DECODE_REGISTERS", {1}) == 1;
  return on;
}

// <BACKEND>_FP32_STATE = 64 or 32: precise or fast fp32. Precise, the fp32 forward keeps
// its state and o's sums in fp64 (chunk_stage's factors from exp_pair), so that o and ht
// carry little more than their own rounding to fp32, at the fp64 pipe's lower rate. Not
// a test knob but a mode: results files record it. The backward keeps its fp32 state.
// Unset: fast for gla (its speed target is fp32's), precise for rwkv6 (its fp32 target
// is o within 1e-7 of fp64).
template <recurrence OP>
bool fp32_state64() {
  static const bool on = [] {
    const int state = knob<OP>("FP32_STATE", {32, 64});
    return state ? state == 64 : OP == recurrence::rwkv6;
  }();
  return on;
}

}  // namespace glabench::parallel_scan
