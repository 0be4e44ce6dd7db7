// Stage 4 over a chunk's K slabs on WMMA, and the block's scratch for it: a chunk's
// intra-chunk scores A summed slab by slab (stage 1's cumulative gates, then stage 4), and
// A as the operand of the next product (o's A·v, dv's Aᵀ·do). chunk_outputs_kernel
// (forward_wmma.cuh), chunk_dv_kernel (backward_wmma.cuh) and the seed reference's
// fwd_inner_chunk_kernel (forward_seed_reference.cuh) build on it.
#pragma once

#include <type_traits>

#include "chunk_io.cuh"
#include "stage1_fwd_decay_cumsum.cuh"
#include "stage4_fwd_inner_chunk.cuh"

namespace glabench::chunked {

// The scratch of one chunk's intra-chunk scores (stage 4) over K slabs.
template <class Tr>
struct scores_smem {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  static constexpr int ld = ld_of<acc_t>(Tr::BK), ldo = ld_of<op_t>(Tr::BK),
                       lda = ld_of<acc_t>(kChunk), ldao = ld_of<op_t>(kChunk);
  acc_t *q, *k, *A, *E;
  typename Tr::gate_t* G;
  op_t *qs, *ks, *A_op;
  __host__ __device__ explicit scores_smem(carve& c)
      : q(c.take<acc_t>(kChunk * ld)),
        k(c.take<acc_t>(kChunk * ld)),
        A(c.take<acc_t>(kChunk * lda)),
        E(c.take<acc_t>(kChunk * ld)),
        G(c.take<typename Tr::gate_t>(kChunk * ld)),
        qs(c.take<op_t>(kChunk * ldo)),
        ks(c.take<op_t>(kStackRows * ldo)),
        A_op(std::is_same_v<op_t, acc_t> ? reinterpret_cast<op_t*>(A)
                                         : c.take<op_t>(kChunk * ldao)) {}

  // Loads the slab k0 of chunk t0 and adds its scores to A; G holds the slab's
  // cumulative gates after. Ends with a barrier.
  template <class S>
  __device__ void add_slab(const head_tensor<const S>& hq, const head_tensor<const S>& hk,
                           const head_tensor<const S>& hg, int64_t t0, int k0) {
    load_slab<kChunk, Tr::BK>(q, ld, hq, t0, k0, convert_to_acc{});
    load_slab<kChunk, Tr::BK>(k, ld, hk, t0, k0, convert_to_acc{});
    load_gates<Tr>(G, E, ld, hg, t0, k0);
    __syncthreads();
    fwd_decay_cumsum<Tr::BK>(G, ld);  // ends with a barrier
    fwd_inner_chunk<Tr>(A, lda, q, k, G, E, ld, qs, ks, ldo);
  }
  __device__ void zero_scores() {
    for (int i = threadIdx.x; i < kChunk * kChunk; i += kThreads)
      A[i / kChunk * lda + i % kChunk] = 0;
  }
  // A as operand (in place when the types agree), times `factor`; with `A_lo`, also the
  // residual of that rounding. No barrier.
  __device__ void scores_to_operand(acc_t factor, op_t* A_lo = nullptr) {
    for (int i = threadIdx.x; i < kChunk * kChunk; i += kThreads) {
      const int r = i / kChunk, cc = i % kChunk;
      const acc_t a = factor * A[r * lda + cc];
      const op_t hi = to_op<op_t>(a);
      A_op[r * ld_A_op() + cc] = hi;
      if (A_lo) A_lo[r * ldao + cc] = to_op<op_t>(a - to_acc_f(hi));
    }
  }
  __host__ __device__ static constexpr int ld_A_op() {
    return std::is_same_v<op_t, acc_t> ? lda : ldao;
  }
};

}  // namespace glabench::chunked
