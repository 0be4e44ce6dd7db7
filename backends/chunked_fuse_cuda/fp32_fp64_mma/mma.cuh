// Register-level tensor-core products of the fp32 and fp64 chunk walks
// (../forward_fp64_dmma.cuh, ../forward_fp32_3xtf32.cuh): one policy per storage type,
// with the same fragment interface.
//
//   fp32  mma.sync m16n8k8 on TF32, as 3×TF32: a·b ≈ a_lo·b_hi + a_hi·b_lo + a_hi·b_hi,
//         each operand split into its TF32 rounding (hi) and the exact fp32 rest (lo), whose
//         bits below TF32's the tensor core drops. The products keep fp32 accuracy; plain
//         TF32 is never used.
//   fp64  mma.sync m16n8k4 on the FP64 tensor cores (DMMA), exact fp64 products. On the
//         H100 it runs at twice m8n8k4's rate (66 against 33 TFLOPS, 8 warps an SM).
//
// Fragments (PTX ISA), with g = lane/4 and c = lane%4:
//   A (TM×TK): m16n8k8 a0 (g, c), a1 (g+8, c), a2 (g, c+4), a3 (g+8, c+4); m16n8k4 a0 (g, c),
//              a1 (g+8, c)
//   B (TK×TN): m16n8k8 b0 (c, g), b1 (c+4, g);                              m16n8k4 b0 (c, g)
//   C (TM×TN): element e at (g + 8·(e/2), 2c + e%2), 4 elements.
// The loads take an accessor x(row, col) of the stored matrix, so one routine reads a tile
// as stored or transposed.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "../ptx_primitives.cuh"
#include "swizzle.hpp"

namespace glabench::chunked::walk_fp {

// Row and column of accumulator element e of lane `lane` in a TM×TN tile.
__device__ __forceinline__ int acc_row(int lane, int e) {
  return (lane >> 2) + 8 * (e >> 1);
}
__device__ __forceinline__ int acc_col(int lane, int e) {
  return 2 * (lane & 3) + (e & 1);
}

// Whether tokens stored as In, widened to fp32, are exact in TF32: fp16's are (11
// significant bits, exponents within fp32's), so a 3×TF32 product's small term of such an
// operand is zero and mma_policy<float>::mma leaves it out (kExactA, kExactB).
template <class In>
inline constexpr bool exact_in_tf32 = std::is_same_v<In, __half>;

template <class T>
struct mma_policy;

template <>
struct mma_policy<float> {
  static constexpr int TM = 16, TN = 8, TK = 8, NACC = 4;
  struct afrag {
    uint32_t hi[4], lo[4];
  };
  struct bfrag {
    uint32_t hi[2], lo[2];
  };
  static __device__ __forceinline__ void split(float x, uint32_t& hi, uint32_t& lo) {
    tc::split_tf32(x, hi, lo);  // NaN and inf stay so through lo
  }
  template <class X>
  static __device__ __forceinline__ afrag load_a(X x, int r0, int k0, int lane) {
    const int g = lane >> 2, c = lane & 3;
    afrag a;
    split(x(r0 + g, k0 + c), a.hi[0], a.lo[0]);
    split(x(r0 + g + 8, k0 + c), a.hi[1], a.lo[1]);
    split(x(r0 + g, k0 + c + 4), a.hi[2], a.lo[2]);
    split(x(r0 + g + 8, k0 + c + 4), a.hi[3], a.lo[3]);
    return a;
  }
  template <class X>
  static __device__ __forceinline__ bfrag load_b(X x, int k0, int n0, int lane) {
    const int g = lane >> 2, c = lane & 3;
    bfrag b;
    split(x(k0 + c, n0 + g), b.hi[0], b.lo[0]);
    split(x(k0 + c + 4, n0 + g), b.hi[1], b.lo[1]);
    return b;
  }
  static __device__ __forceinline__ void mma1(float (&d)[4], const uint32_t (&a)[4],
                                              const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  // The small terms first, into the accumulator that the large one then joins. kExactA,
  // kExactB: that operand is exact in TF32 (exact_in_tf32), its lo zero, so its small term
  // is left out — the same sum, to the bit, in two products or one.
  template <bool kExactA = false, bool kExactB = false>
  static __device__ __forceinline__ void mma(float (&d)[4], const afrag& a, const bfrag& b) {
    if constexpr (!kExactA) mma1(d, a.lo, b.hi);
    if constexpr (!kExactB) mma1(d, a.hi, b.lo);
    mma1(d, a.hi, b.hi);
  }

  // Operand tiles split once, when written: hi in one tile, lo in its twin, read by
  // ldmatrix — an 8×8 b16 matrix is an 8-row × 4-float block, each lane's word the
  // fragment element at (row lane/4, column lane%4).
  static constexpr bool kSplit = true;
  static __device__ __forceinline__ void store_op(float* hi, float* lo, int at, float x) {
    uint32_t h, l;
    split(x, h, l);
    hi[at] = __uint_as_float(h), lo[at] = __uint_as_float(l);
  }
  // A at (r0, k0) of a [m][k] tile of COLS columns.
  template <int COLS>
  static __device__ __forceinline__ afrag lds_a(const float* hi, const float* lo, int r0, int k0,
                                                int lane) {
    const int m = lane >> 3,
              at = swz<float, COLS>(r0 + (lane & 7) + 8 * (m & 1), k0 + 4 * (m >> 1));
    afrag a;
    tc::ldsm_x4(a.hi, tc::smem_addr(hi + at));
    tc::ldsm_x4(a.lo, tc::smem_addr(lo + at));
    return a;
  }
  // B at (k0, n0) of a tile stored [n][k] (COLS columns of k).
  template <int COLS>
  static __device__ __forceinline__ bfrag lds_b(const float* hi, const float* lo, int n0, int k0,
                                                int lane) {
    const int at = swz<float, COLS>(n0 + (lane & 7), k0 + 4 * ((lane >> 3) & 1));
    bfrag b;
    tc::ldsm_x2(b.hi, tc::smem_addr(hi + at));
    tc::ldsm_x2(b.lo, tc::smem_addr(lo + at));
    return b;
  }

  // The same from one unsplit tile (swz<float, COLS>), split in registers: A at (r0, k0)
  // of a [m][k] tile; B at (k0, n0) and (k0, n0 + 8) of a [n][k] tile, one ldmatrix.
  template <int COLS>
  static __device__ __forceinline__ afrag lds_a_unsplit(const float* t, int r0, int k0, int lane) {
    const int m = lane >> 3,
              at = swz<float, COLS>(r0 + (lane & 7) + 8 * (m & 1), k0 + 4 * (m >> 1));
    uint32_t x[4];
    tc::ldsm_x4(x, tc::smem_addr(t + at));
    afrag a;
#pragma unroll
    for (int i = 0; i < 4; ++i) split(__uint_as_float(x[i]), a.hi[i], a.lo[i]);
    return a;
  }
  template <int COLS>
  static __device__ __forceinline__ void lds_b2_unsplit(bfrag (&b)[2], const float* t, int n0,
                                                        int k0, int lane) {
    const int at = swz<float, COLS>(n0 + (lane & 7) + 8 * (lane >> 4), k0 + 4 * ((lane >> 3) & 1));
    uint32_t x[4];
    tc::ldsm_x4(x, tc::smem_addr(t + at));
#pragma unroll
    for (int i = 0; i < 4; ++i)
      split(__uint_as_float(x[i]), b[i / 2].hi[i % 2], b[i / 2].lo[i % 2]);
  }
  // d += a·b with the three products summed apart and added to d rounded to nearest: the
  // tensor cores' fp32 accumulation truncates, a bias that grows with the products a sum
  // takes (as WMMA's block_mma does).
  template <bool kExactA = false, bool kExactB = false>
  static __device__ __forceinline__ void mma_rn(float (&d)[4], const afrag& a, const bfrag& b) {
    float t[4] = {0.f, 0.f, 0.f, 0.f};
    mma<kExactA, kExactB>(t, a, b);
#pragma unroll
    for (int i = 0; i < 4; ++i) d[i] += t[i];
  }
};

template <>
struct mma_policy<double> {
  static constexpr int TM = 16, TN = 8, TK = 4, NACC = 4;
  struct afrag {
    double a[2];
  };
  struct bfrag {
    double b;
  };
  template <class X>
  static __device__ __forceinline__ afrag load_a(X x, int r0, int k0, int lane) {
    const int g = lane >> 2, c = lane & 3;
    return {{x(r0 + g, k0 + c), x(r0 + g + 8, k0 + c)}};
  }
  template <class X>
  static __device__ __forceinline__ bfrag load_b(X x, int k0, int n0, int lane) {
    return {x(k0 + (lane & 3), n0 + (lane >> 2))};
  }
  // Before sm_90 (no m16n8k4 in f64), as the two m8n8k4 of its row halves.
  static __device__ __forceinline__ void mma(double (&d)[4], const afrag& a, const bfrag& b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a.a[0]), "d"(a.a[1]), "d"(b.b));
#else
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a.a[0]), "d"(b.b));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[2]), "+d"(d[3])
                 : "d"(a.a[1]), "d"(b.b));
#endif
  }

  // The same interface as fp32's split tiles: one tile, exact operands.
  static constexpr bool kSplit = false;
  static __device__ __forceinline__ void store_op(double* hi, double*, int at, double x) {
    hi[at] = x;
  }
  template <int COLS>
  static __device__ __forceinline__ afrag lds_a(const double* hi, const double*, int r0, int k0,
                                                int lane) {
    return load_a([&](int r, int k) { return hi[swz<double, COLS>(r, k)]; }, r0, k0, lane);
  }
  template <int COLS>
  static __device__ __forceinline__ bfrag lds_b(const double* hi, const double*, int n0, int k0,
                                                int lane) {
    return {hi[swz<double, COLS>(n0 + (lane >> 2), k0 + (lane & 3))]};
  }
  template <int COLS>
  static __device__ __forceinline__ afrag lds_a_unsplit(const double* t, int r0, int k0, int lane) {
    return lds_a<COLS>(t, nullptr, r0, k0, lane);
  }
  template <int COLS>
  static __device__ __forceinline__ void lds_b2_unsplit(bfrag (&b)[2], const double* t, int n0,
                                                        int k0, int lane) {
    b[0] = lds_b<COLS>(t, nullptr, n0, k0, lane);
    b[1] = lds_b<COLS>(t, nullptr, n0 + 8, k0, lane);
  }
  // DMMA rounds each step to nearest: nothing to add apart (and every operand is exact).
  template <bool = false, bool = false>
  static __device__ __forceinline__ void mma_rn(double (&d)[4], const afrag& a, const bfrag& b) {
    mma(d, a, b);
  }
};

}  // namespace glabench::chunked::walk_fp
