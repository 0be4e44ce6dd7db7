// Register-level tensor-core primitives of the chunk walks (namespace tc): 16-byte
// asynchronous copies into shared memory, ldmatrix, mma.sync m16n8k16 (bf16 operands,
// fp32 accumulation) and the XOR swizzle that keeps ldmatrix free of bank conflicts. The
// bf16 walks use all of them; the fp32 and fp64 walks the copies, ldmatrix, ex2 and the
// registers handed between warpgroups; the
// fp32 walk and WMMA's fp32 products the 3×TF32 split; the fp gradient kernel clusters;
// the fp32 walk and gradient kernel, at fp16 storage, the widening of halves.
//
// Fragment layouts (PTX ISA, mma.m16n8k16), with g = lane/4 and c = lane%4:
//   A (16×16): a0 (row g, cols 2c..2c+1), a1 (row g+8, same), a2 (row g, cols 8+2c..),
//              a3 (row g+8, cols 8+2c..);
//   B (16×8):  b0 (rows 2c..2c+1, col g), b1 (rows 8+2c.., col g);
//   C (16×8):  c0, c1 (row g, cols 2c, 2c+1), c2, c3 (row g+8, same).
// Two C tiles side by side are, rounded to bf16 pairs, the A fragment of a 16×16 operand
// — how the intra-chunk scores feed A·v without a trip through shared memory.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace glabench::chunked::tc {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of ROW_BYTES-byte rows. The
// chunk index is XORed with row % 8, so the eight rows an ldmatrix reads at one logical
// column land in eight different bank groups.
template <int ROW_BYTES>
__device__ __forceinline__ uint32_t swizzle(int row, int chunk) {
  static_assert(ROW_BYTES % 128 == 0, "rows of whole 128-byte lines");
  return static_cast<uint32_t>(row * ROW_BYTES + ((chunk ^ (row & 7)) << 4));
}
// Byte offset of bf16 element (row, col).
template <int ROW_BYTES>
__device__ __forceinline__ uint32_t swizzle_elem(int row, int col) {
  return swizzle<ROW_BYTES>(row, col >> 3) + ((col & 7) << 1);
}

// A thread-block cluster's barrier, split: arrive releases this thread's writes to shared
// memory, wait acquires those of every thread that arrived (every thread of each block
// takes part); and a pointer to another block's copy of a shared-memory object. sm_90
// only: the launches take clusters where a kernel has sm_90 code
// (../common/device_attributes.hpp, runs_sm90_code); in sm_80's code they trap.
__device__ __forceinline__ void cluster_arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
template <class T>
__device__ __forceinline__ const T* cluster_peer(T* p, int rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(p, rank);
#else
  __trap();
  return p;
#endif
}

// Hopper's registers handed between a block's warpgroups (setmaxnreg, sm_90a): the calling
// warpgroup's threads keep at most N registers, giving the rest to the block's pool
// (shrink), or take from it up to N (grow, which waits until the pool has them). Where the
// code is built without sm_90a's features both do nothing, and the compiler keeps every
// thread to the launch's even share.
template <int N>
__device__ __forceinline__ void shrink_registers() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg's register counts");
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N>
__device__ __forceinline__ void grow_registers() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg's register counts");
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

// 16 bytes global → shared, asynchronously; `bytes` = 0 writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
// The same for 8 bytes (rows only 8-byte aligned).
__device__ __forceinline__ void cp_async8(uint32_t dst, const void* src, int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}
// All but the newest N groups of this thread's cp.async have landed.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2(uint32_t (&r)[2], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a·b (16×16 · 16×8, bf16 operands, fp32 accumulators).
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&p);
}
// (x, y) as a bf16 pair and the pair of what that rounding left out.
__device__ __forceinline__ void split_bf16(float x, float y, uint32_t& hi, uint32_t& lo) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
  const float2 back = __bfloat1622float2(h);
  hi = *reinterpret_cast<const uint32_t*>(&h);
  lo = pack_bf16(x - back.x, y - back.y);
}
// x as 3×TF32 operands: hi, x rounded to TF32's 10 mantissa bits (half an ulp added to
// the magnitude, the rest cut), and lo = x − hi, exact in fp32, whose bits below TF32's the
// tensor core ignores: |lo| ≤ 2^-11·|x|, so each operand loses at most 2^-21 of itself, and
// a product (with the dropped lo·lo) about 2^-19.7. Three instructions, where cvt.rna.tf32
// takes eight on sm_90. A NaN or inf x leaves lo NaN (hi may not be: NaN's payload can
// carry into the sign), so a·b ≈ a_lo·b_hi + a_hi·b_lo + a_hi·b_hi is NaN as it should.
__device__ __forceinline__ void split_tf32(float x, uint32_t& hi, uint32_t& lo) {
  hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}

// One 16-byte vector of 8 halves, times `mul`, as floats into the two 16-byte groups at
// `lo` (halves 0–3) and `hi` (4–7) of shared memory: fp16 storage widened in place.
__device__ __forceinline__ void widen_halves(const uint4& h, float mul, float* lo, float* hi) {
  const __half2* p = reinterpret_cast<const __half2*>(&h);
  float f[8];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 w = __half22float2(p[j]);
    f[2 * j] = mul * w.x, f[2 * j + 1] = mul * w.y;
  }
  *reinterpret_cast<float4*>(lo) = make_float4(f[0], f[1], f[2], f[3]);
  *reinterpret_cast<float4*>(hi) = make_float4(f[4], f[5], f[6], f[7]);
}

// 2^x on the special-function unit (2 ulp; ±0 for results below 2^-126).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace glabench::chunked::tc
