// Shared-memory mbarriers (sm_80 and newer): a barrier's arrive releases the arriving
// thread's writes and its wait acquires them; a wait names the phase it waits for by
// parity. Used by chunked_fuse_cuda's pipelined walks (pipeline_barriers.cuh) and by the
// bulk-copy decode kernel (parallel_scan/decode_bulk_kernel.cuh).
#pragma once

#include <cstdint>

namespace glabench::mbarrier {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void init(uint64_t* b, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(smem_addr(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void arrive(uint64_t* b) {
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];\n" ::"r"(smem_addr(b)) : "memory");
}
// Hopper's try_wait may suspend the thread until the phase completes; sm_80 has only the
// polling test_wait.
__device__ __forceinline__ void wait(uint64_t* b, int parity) {
  uint32_t done;
  do {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(b)), "r"(parity)
        : "memory");
#else
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(b)), "r"(parity)
        : "memory");
#endif
  } while (!done);
}

}  // namespace glabench::mbarrier
