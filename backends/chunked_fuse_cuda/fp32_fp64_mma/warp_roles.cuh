// The pipelined fp walks' two kinds of warps (fp32_pipeline.cuh, fp64_pipeline.cuh): the
// consumer warps first, then the producers, and the registers each kind keeps.
//
// A block of 16 warps (fp32's 128-column walk and first pass, fp64's walk) has an even
// share of 128 registers a thread, past which the consumers' state update and combine
// spill (the dS walk's most: 212 bytes at fp32, 280 at fp64, ptxas -v) while the producers
// fit in fewer. Hopper hands registers between warpgroups (tc::grow_registers), so there
// the consumers take Z::CONSUMER_REGS and the producers keep Z::PRODUCER_REGS (the dS
// walks then spill 8 and 72 bytes, CUDA 13.0); 0 keeps the even share (fp32's 64-column
// walk, 12 warps: 168 registers, spilling at most 8 bytes).
#pragma once

#include "../ptx_primitives.cuh"

namespace glabench::chunked::walk_fp {

// A thread's kind, its warpgroup's registers set for it.
enum class role { consumer, producer };
template <class Z>
__device__ __forceinline__ role take_role() {
  // The even share the kernels launch with (__launch_bounds__(THREADS, 1); ptxas -v: 128
  // at 16 warps), which the producers' registers given up must pay for the consumers'.
  constexpr int even = 64 * 1024 / Z::THREADS / 8 * 8;
  static_assert((Z::CONSUMER_REGS == 0 && Z::PRODUCER_REGS == 0) ||
                    (Z::CONSUMERS % 4 == 0 && Z::PRODUCERS % 4 == 0 &&
                     32 * Z::CONSUMERS * (Z::CONSUMER_REGS - even) ==
                         Z::PTHREADS * (even - Z::PRODUCER_REGS)),
                "whole warpgroups of each kind, the block's registers handed, not created");
  if (threadIdx.x < 32 * Z::CONSUMERS) {
    if constexpr (Z::CONSUMER_REGS > 0) tc::grow_registers<Z::CONSUMER_REGS>();
    return role::consumer;
  }
  if constexpr (Z::PRODUCER_REGS > 0) tc::shrink_registers<Z::PRODUCER_REGS>();
  return role::producer;
}

}  // namespace glabench::chunked::walk_fp
