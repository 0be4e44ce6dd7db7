// The seed's reference path (CHUNKED_FUSE_CUDA_STAGES=separate): the five stages as the
// seed launches them, five kernels, each writing its result to the workspace for the next
// (decay_cumsum_kernel, prepare_qg_kg_kernel, fused_chunk_gla_fwd_kernel,
// fwd_inner_chunk_kernel, combine_kernel). Its stages are the WMMA ones (wmma/), so it is
// the readable form of the algorithm and the path the fused ones are tested against.
// Forward only: this path's backward is the WMMA one (backward_wmma.cuh) in every dtype.
#pragma once

#include "wmma/chunk_io.cuh"
#include "wmma/inner_chunk_scores.cuh"
#include "wmma/stage1_fwd_decay_cumsum.cuh"
#include "wmma/stage2_prepare_qg_kg.cuh"
#include "wmma/stage3_fused_chunk_gla_fwd.cuh"
#include "wmma/stage4_fwd_inner_chunk.cuh"
#include "wmma/stage5_combine.cuh"

namespace glabench::chunked {

// Workspace arrays, per head and padded: G [Tp][Kp] (acc), q̃ and k̂ [Tp][Kp] (operand),
// o_inter [Tp][Vp] (acc), A [NT][C][C] (acc).
template <class Tr>
struct separate_workspace {
  typename Tr::gate_t* G;
  typename Tr::op_t *qg, *kg;
  typename Tr::acc_t *o_inter, *A;
};

template <class T>
__device__ T* per_head(T* base, int bh, int64_t rows, int cols, int64_t row0 = 0) {
  return base + (static_cast<int64_t>(bh) * rows + row0) * cols;
}

// Stage 1 kernel: grid (NT, Kp/BK, B·H).
template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    decay_cumsum_kernel(tensors<S> x, dims d, separate_workspace<Tr> w) {
  using gate_t = typename Tr::gate_t;
  constexpr int ld = ld_of<gate_t>(Tr::BK);
  __shared__ __align__(128) gate_t G[kChunk * ld];
  const int n = blockIdx.x, k0 = blockIdx.y * Tr::BK, bh = blockIdx.z;
  const int64_t t0 = static_cast<int64_t>(n) * kChunk, Tp = static_cast<int64_t>(d.NT) * kChunk;
  load_slab<kChunk, Tr::BK>(G, ld, head_tensor<const S>(x.g, d, d.K, bh), t0, k0,
                            convert_to<gate_t>{});
  __syncthreads();
  fwd_decay_cumsum<Tr::BK>(G, ld);  // ends with a barrier
  store_tile<kChunk, Tr::BK>(per_head(w.G, bh, Tp, d.Kp, t0) + k0, d.Kp, G, ld,
                             [](gate_t a) { return a; });
}

// Stage 2 kernel: grid (NT, Kp/BK, B·H).
template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    prepare_qg_kg_kernel(tensors<S> x, dims d, separate_workspace<Tr> w) {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  constexpr int ld = ld_of<acc_t>(Tr::BK), ldo = ld_of<op_t>(Tr::BK);
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  acc_t* q = c.take<acc_t>(kChunk * ld);
  acc_t* k = c.take<acc_t>(kChunk * ld);
  typename Tr::gate_t* G = c.take<typename Tr::gate_t>(kChunk * ld);
  op_t* out = c.take<op_t>(kChunk * ldo);
  const int n = blockIdx.x, k0 = blockIdx.y * Tr::BK, bh = blockIdx.z;
  const int64_t t0 = static_cast<int64_t>(n) * kChunk, Tp = static_cast<int64_t>(d.NT) * kChunk;
  load_slab<kChunk, Tr::BK>(q, ld, head_tensor<const S>(x.q, d, d.K, bh), t0, k0, convert_to_acc{});
  load_slab<kChunk, Tr::BK>(k, ld, head_tensor<const S>(x.k, d, d.K, bh), t0, k0, convert_to_acc{});
  load_tile<kChunk, Tr::BK>(G, ld, per_head(w.G, bh, Tp, d.Kp, t0) + k0, d.Kp,
                            [](typename Tr::gate_t a) { return a; });
  __syncthreads();
  prepare_qg<Tr>(out, ldo, q, G, ld, Tr::BK, acc_t(1));
  __syncthreads();
  store_tile<kChunk, Tr::BK>(per_head(w.qg, bh, Tp, d.Kp, t0) + k0, d.Kp, out, ldo,
                             [](op_t a) { return a; });
  __syncthreads();
  prepare_kg<Tr>(out, ldo, k, G, ld, Tr::BK);
  __syncthreads();
  store_tile<kChunk, Tr::BK>(per_head(w.kg, bh, Tp, d.Kp, t0) + k0, d.Kp, out, ldo,
                             [](op_t a) { return a; });
}

// Stage 3 kernel, the seed's fused_chunk_gla_fwd_kernel: grid (Vp/BV, B·H); the block
// holds the whole K×BV state and walks the chunks, writing o_inter and ht.
template <class Tr>
struct state_pass_smem {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  static constexpr int ldo = ld_of<op_t>(Tr::BK), ldv = ld_of<op_t>(Tr::BV),
                       ldacc = ld_of<acc_t>(Tr::BV);
  acc_t *S, *o;
  typename Tr::gate_t* G_last;
  op_t *qg, *kg, *S_op, *v;
  __host__ __device__ state_pass_smem(carve& c, int Kp)
      : S(c.take<acc_t>(static_cast<size_t>(Kp) * ldacc)),
        o(c.take<acc_t>(kChunk * ldacc)),
        G_last(c.take<typename Tr::gate_t>(Tr::BK)),
        qg(c.take<op_t>(kChunk * ldo)),
        kg(c.take<op_t>(kChunk * ldo)),
        S_op(c.take<op_t>(Tr::BK * ldv)),
        v(c.take<op_t>(kChunk * ldv)) {}
};

template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    fused_chunk_gla_fwd_kernel(tensors<S> x, dims d, separate_workspace<Tr> w) {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  state_pass_smem<Tr> s(c, d.Kp);
  const int v0 = blockIdx.x * Tr::BV, bh = blockIdx.y;
  const int64_t Tp = static_cast<int64_t>(d.NT) * kChunk;
  load_abi_state<Tr::BV>(s.S, s.ldacc, x.h0, x.state_f32, d, bh, 0, v0, d.Kp);
  __syncthreads();
  const head_tensor<const S> v(x.v, d, d.V, bh);
  for (int n = 0; n < d.NT; ++n) {
    const int64_t t0 = static_cast<int64_t>(n) * kChunk;
    for (int i = threadIdx.x; i < kChunk * Tr::BV; i += kThreads)
      s.o[i / Tr::BV * s.ldacc + i % Tr::BV] = 0;
    load_slab<kChunk, Tr::BV>(s.v, s.ldv, v, t0, v0, convert_to<op_t>{});
    for (int k0 = 0; k0 < d.Kp; k0 += Tr::BK) {
      auto same = [](op_t a) { return a; };
      load_tile<kChunk, Tr::BK>(s.qg, s.ldo, per_head(w.qg, bh, Tp, d.Kp, t0) + k0, d.Kp, same);
      load_tile<kChunk, Tr::BK>(s.kg, s.ldo, per_head(w.kg, bh, Tp, d.Kp, t0) + k0, d.Kp, same);
      load_tile<1, Tr::BK>(s.G_last, Tr::BK, per_head(w.G, bh, Tp, d.Kp, t0 + kChunk - 1) + k0,
                           d.Kp, [](typename Tr::gate_t a) { return a; });
      acc_t* S_slab = s.S + k0 * s.ldacc;
      load_tile<Tr::BK, Tr::BV>(s.S_op, s.ldv, S_slab, s.ldacc, convert_to<op_t>{});
      __syncthreads();
      inter_chunk_output<Tr>(s.o, s.ldacc, s.qg, s.ldo, s.S_op, s.ldv, Tr::BK, Tr::BV);
      decay_state<Tr>(S_slab, s.ldacc, s.G_last, Tr::BK, Tr::BV);
      __syncthreads();
      add_chunk_to_state<Tr>(S_slab, s.ldacc, s.kg, s.ldo, s.v, s.ldv, Tr::BK, Tr::BV);
      __syncthreads();
    }
    store_tile<kChunk, Tr::BV>(per_head(w.o_inter, bh, Tp, d.Vp, t0) + v0, d.Vp, s.o, s.ldacc,
                               [](acc_t a) { return a; });
  }
  store_abi_state<Tr::BV>(x.ht, x.state_f32, d, bh, 0, v0, s.S, s.ldacc, d.Kp);
}

// Stage 4 kernel, the seed's fwd_inner_chunk: grid (NT, B·H); A over all K slabs.
template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    fwd_inner_chunk_kernel(tensors<S> x, dims d, separate_workspace<Tr> w) {
  using acc_t = typename Tr::acc_t;
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  scores_smem<Tr> s(c);
  const int n = blockIdx.x, bh = blockIdx.y;
  const int64_t t0 = static_cast<int64_t>(n) * kChunk;
  const head_tensor<const S> q(x.q, d, d.K, bh), k(x.k, d, d.K, bh), g(x.g, d, d.K, bh);
  s.zero_scores();
  for (int k0 = 0; k0 < d.Kp; k0 += Tr::BK) {
    s.add_slab(q, k, g, t0, k0);
  }
  store_tile<kChunk, kChunk>(per_head(w.A, bh, static_cast<int64_t>(d.NT) * kChunk, kChunk, t0),
                             kChunk, s.A, s.lda, [](acc_t a) { return a; });
}

// Stage 5 kernel, combine: grid (NT, Vp/BV, B·H).
template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(tensors<S> x, dims d, separate_workspace<Tr> w, double scale) {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  constexpr int lda = ld_of<op_t>(kChunk), ldv = ld_of<op_t>(Tr::BV), ldacc = ld_of<acc_t>(Tr::BV);
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  op_t* A = c.take<op_t>(kChunk * lda);
  op_t* v = c.take<op_t>(kChunk * ldv);
  acc_t* o = c.take<acc_t>(kChunk * ldacc);
  const int n = blockIdx.x, v0 = blockIdx.y * Tr::BV, bh = blockIdx.z;
  const int64_t t0 = static_cast<int64_t>(n) * kChunk, Tp = static_cast<int64_t>(d.NT) * kChunk;
  load_tile<kChunk, kChunk>(A, lda, per_head(w.A, bh, Tp, kChunk, t0), kChunk, convert_to<op_t>{});
  load_slab<kChunk, Tr::BV>(v, ldv, head_tensor<const S>(x.v, d, d.V, bh), t0, v0,
                            convert_to<op_t>{});
  load_tile<kChunk, Tr::BV>(o, ldacc, per_head(w.o_inter, bh, Tp, d.Vp, t0) + v0, d.Vp,
                            [](acc_t a) { return a; });
  __syncthreads();
  combine_inner_inter<Tr>(o, ldacc, A, lda, v, ldv, Tr::BV);
  __syncthreads();
  const acc_t sc = static_cast<acc_t>(scale);
  store_slab<kChunk, Tr::BV>(head_tensor<S>(x.o, d, d.V, bh), t0, v0, o, ldacc,
                             [sc](acc_t a) { return to_op<S>(sc * a); });
}

}  // namespace glabench::chunked
