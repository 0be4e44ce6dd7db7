// Block-wide matrix products on tensor cores (WMMA) between shared-memory tiles: the
// one routine every stage's product goes through. bf16 runs bf16×bf16 with fp32
// accumulation; fp32 runs three TF32 products per tile (a_hi·b_hi + a_hi·b_lo +
// a_lo·b_hi, the lo parts being what TF32 rounding cut off), which keeps fp32 accuracy
// on the TF32 units; fp64 runs DMMA.
#pragma once

#include <mma.h>

#include <type_traits>

#include "../ptx_primitives.cuh"
#include "traits.cuh"

namespace glabench::chunked {

namespace wmma = nvcuda::wmma;

// How a tile is stored: row — element (r, c) at p[r·ld + c]; col — at p[c·ld + r].
enum class lay { row, col };

template <lay L>
using wmma_layout = std::conditional_t<L == lay::row, wmma::row_major, wmma::col_major>;

template <class Tr>
struct wmma_element {
  using type = typename Tr::op_t;
};
template <>
struct wmma_element<traits<float>> {
  using type = wmma::precision::tf32;
};

// Fragment elements as 3×TF32 operands (tc::split_tf32), in place: hi, and lo in its twin.
template <class Frag>
__device__ __forceinline__ void split_tf32(Frag& hi, Frag& lo) {
#pragma unroll
  for (int i = 0; i < hi.num_elements; ++i) {
    uint32_t h, l;
    tc::split_tf32(hi.x[i], h, l);
    hi.x[i] = __uint_as_float(h);
    lo.x[i] = __uint_as_float(l);
  }
}

// C = (accumulate ? C : 0) + A·B over the whole block. C is M×N, row-major in the
// accumulator type; A is M×Kd and B is Kd×N in the operand type, each row- or
// column-major (LA, LB) with leading dimensions lda, ldb. M, N and Kd are multiples
// of the tile (TM, TN, TK); every tile pointer is 32-byte aligned (ld_of's padding and
// tile-multiple offsets keep it so). Warps take output tiles in turn; no barrier
// inside: callers synchronise before (inputs written) and after (C read). Several
// small independent products in a row spread over the warps with `warp_shift`, the
// number of tiles the earlier ones took.
template <class Tr, lay LA, lay LB>
__device__ void block_mma(typename Tr::acc_t* C, int ldc, const typename Tr::op_t* A, int lda,
                          const typename Tr::op_t* B, int ldb, int M, int N, int Kd,
                          bool accumulate, int warp_shift = 0) {
  using acc_t = typename Tr::acc_t;
  using E = typename wmma_element<Tr>::type;
  const int warp = (threadIdx.x / 32 + kWarps - warp_shift % kWarps) % kWarps;
  const int tiles_n = N / Tr::TN;
  const int tiles = (M / Tr::TM) * tiles_n;
  for (int tile = warp; tile < tiles; tile += kWarps) {
    const int m0 = (tile / tiles_n) * Tr::TM;
    const int n0 = (tile % tiles_n) * Tr::TN;
    acc_t* cp = C + m0 * ldc + n0;
    wmma::fragment<wmma::accumulator, Tr::TM, Tr::TN, Tr::TK, acc_t> c;
    if (accumulate)
      wmma::load_matrix_sync(c, cp, ldc, wmma::mem_row_major);
    else
      wmma::fill_fragment(c, acc_t(0));
    for (int k0 = 0; k0 < Kd; k0 += Tr::TK) {
      wmma::fragment<wmma::matrix_a, Tr::TM, Tr::TN, Tr::TK, E, wmma_layout<LA>> a;
      wmma::fragment<wmma::matrix_b, Tr::TM, Tr::TN, Tr::TK, E, wmma_layout<LB>> b;
      wmma::load_matrix_sync(a, LA == lay::row ? A + m0 * lda + k0 : A + k0 * lda + m0, lda);
      wmma::load_matrix_sync(b, LB == lay::row ? B + k0 * ldb + n0 : B + n0 * ldb + k0, ldb);
      if constexpr (Tr::kSplits == 3) {
        // The k-step's three products in a fragment of their own, added to C rounded to
        // nearest: the tensor cores' fp32 accumulation truncates, a bias that would grow
        // with Kd (2e-6 relative in the gradients).
        decltype(a) a_lo;
        decltype(b) b_lo;
        split_tf32(a, a_lo);
        split_tf32(b, b_lo);
        decltype(c) t;
        wmma::fill_fragment(t, acc_t(0));
        wmma::mma_sync(t, a_lo, b, t);
        wmma::mma_sync(t, a, b_lo, t);
        wmma::mma_sync(t, a, b, t);
#pragma unroll
        for (int i = 0; i < t.num_elements; ++i) c.x[i] += t.x[i];
      } else {
        wmma::mma_sync(c, a, b, c);
      }
    }
    wmma::store_matrix_sync(cp, c, ldc, wmma::mem_row_major);
  }
}

template <class Tr>
__host__ __device__ constexpr int mma_tiles(int M, int N) {
  return (M / Tr::TM) * (N / Tr::TN);
}

}  // namespace glabench::chunked
