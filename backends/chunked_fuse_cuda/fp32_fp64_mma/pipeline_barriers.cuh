// The barriers of the pipelined fp32 and fp64 walks (fp32_pipeline.cuh, fp64_pipeline.cuh),
// whose producer and consumer warps hand a ring of chunk buffers between them.
#pragma once

#include <cstdint>

#include "../../common/mbarrier.cuh"
#include "../ptx_primitives.cuh"

namespace glabench::chunked::walk_fp {

// The producers' own barrier (named barrier 1, 0 being __syncthreads'; fp64's consumers
// pair up on 2–5, fp64_pipeline.cuh), and the handoff of the buffers: mbarriers, whose arrive
// releases the arriving thread's writes and whose wait acquires them — so every thread arrives (a
// buffer's `full` counts the producers' threads, its `empty` the consumers'), and a wait names the
// phase it waits for by parity, the buffer's round (chunk / NBUF) mod 2.
namespace bar {
inline constexpr int kProducers = 1;
__device__ __forceinline__ void sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// A barrier that also returns whether `p` held in every thread that reached it.
__device__ __forceinline__ bool sync_and(int id, int threads, bool p) {
  uint32_t r;
  asm volatile(
      "{\n .reg .pred p, q;\n setp.ne.u32 p, %1, 0;\n bar.red.and.pred q, %2, %3, p;\n"
      " selp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(r)
      : "r"(static_cast<uint32_t>(p)), "r"(id), "r"(threads)
      : "memory");
  return r != 0;
}
using mbarrier::arrive;  // ../../common/mbarrier.cuh
using mbarrier::init;
using mbarrier::wait;
}  // namespace bar

using tc::cp_async_wait;

}  // namespace glabench::chunked::walk_fp
