// The forward on WMMA (block-wide tensor-core products between shared-memory tiles,
// wmma/block_mma.cuh), for what the walks do not take: heads with K > 128 or rows the
// walks cannot load, in every dtype. Two kernels:
// - chunk_states_kernel (stages 1–3 for the state): one block per (K slab, V slab,
//   head) walks the chunks and writes the state before every chunk to the workspace —
//   key features are independent, so K is split across blocks, not reduced; the WMMA
//   backward (backward_wmma.cuh) starts from it too;
// - chunk_outputs_kernel (stages 1, 2, 4, 5 and stage 3's output): one block per
//   (chunk, wide V slab, head), all chunks in parallel: o = scale·(q̃·S_n + A·v).
#pragma once

#include "wmma/chunk_io.cuh"
#include "wmma/inner_chunk_scores.cuh"
#include "wmma/stage1_fwd_decay_cumsum.cuh"
#include "wmma/stage2_prepare_qg_kg.cuh"
#include "wmma/stage3_fused_chunk_gla_fwd.cuh"
#include "wmma/stage4_fwd_inner_chunk.cuh"
#include "wmma/stage5_combine.cuh"

namespace glabench::chunked {

// ---- chunk_states_kernel -------------------------------------------------------------
// The shared memory of a walk over the chunks that carries a BK×BV slab of a state: the
// forward's (k, S, k̂, v) here, the backward's (q, dS, q̃, do) in chunk_dstates_kernel.
template <class Tr>
struct walk_smem {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  static constexpr int ld = ld_of<acc_t>(Tr::BK), ldo = ld_of<op_t>(Tr::BK),
                       ldv = ld_of<op_t>(Tr::BV), lds = ld_of<acc_t>(Tr::BV);
  acc_t *key, *S;  // the K slab of k (q), the state (its gradient)
  typename Tr::gate_t* G;
  op_t *key_op, *val;  // k̂ (q̃) and v (do) as operands
  __host__ __device__ explicit walk_smem(carve& c)
      : key(c.take<acc_t>(kChunk * ld)),
        S(c.take<acc_t>(Tr::BK * lds)),
        G(c.take<typename Tr::gate_t>(kChunk * ld)),
        key_op(c.take<op_t>(kChunk * ldo)),
        val(c.take<op_t>(kChunk * ldv)) {}
};

// states[bh][n] = the state before chunk n (n = 0 … NT; NT: after the last), rows
// k0 … k0+BK, columns v0 … v0+BV; ht too when asked for.
template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    chunk_states_kernel(tensors<S> x, dims d, typename Tr::acc_t* states) {
  using acc_t = typename Tr::acc_t;
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  walk_smem<Tr> s(c);
  const int k0 = blockIdx.x * Tr::BK, v0 = blockIdx.y * Tr::BV, bh = blockIdx.z;
  load_abi_state<Tr::BV>(s.S, s.lds, x.h0, x.state_f32, d, bh, k0, v0, Tr::BK);
  const head_tensor<const S> k(x.k, d, d.K, bh), g(x.g, d, d.K, bh), v(x.v, d, d.V, bh);
  slab_loads<kChunk, Tr::BK, S> next_k, next_g;
  slab_loads<kChunk, Tr::BV, S> next_v;
  next_k.issue(k, 0, k0);
  next_g.issue(g, 0, k0);
  next_v.issue(v, 0, v0);
  for (int n = 0; n < d.NT; ++n) {
    const int64_t t0 = static_cast<int64_t>(n) * kChunk;
    next_k.commit(k, t0, k0, [&](int r, int cc, S e) { s.key[r * s.ld + cc] = to_acc_f(e); });
    next_g.commit(g, t0, k0, [&](int r, int cc, S e) { s.G[r * s.ld + cc] = to_acc_f(e); });
    next_v.commit(v, t0, v0, [&](int r, int cc, S e) {
      s.val[r * s.ldv + cc] = to_op<typename Tr::op_t>(to_acc_f(e));
    });
    if (n + 1 < d.NT) {  // the next chunk's loads fly while this one computes
      next_k.issue(k, t0 + kChunk, k0);
      next_g.issue(g, t0 + kChunk, k0);
      next_v.issue(v, t0 + kChunk, v0);
    }
    __syncthreads();
    fwd_decay_cumsum<Tr::BK>(s.G, s.ld);  // ends with a barrier
    prepare_kg<Tr>(s.key_op, s.ldo, s.key, s.G, s.ld, Tr::BK);
    decay_state<Tr>(s.S, s.lds, s.G + (kChunk - 1) * s.ld, Tr::BK, Tr::BV,
                    state_tile(states, d, bh, n, k0, v0), d.Vp);
    __syncthreads();
    add_chunk_to_state<Tr>(s.S, s.lds, s.key_op, s.ldo, s.val, s.ldv, Tr::BK, Tr::BV);
    __syncthreads();
  }
  store_tile<Tr::BK, Tr::BV>(state_tile(states, d, bh, d.NT, k0, v0), d.Vp, s.S, s.lds,
                             [](acc_t a) { return a; });
  store_abi_state<Tr::BV>(x.ht, x.state_f32, d, bh, k0, v0, s.S, s.lds, Tr::BK);
}

// ---- chunk_outputs_kernel ------------------------------------------------------------
template <class Tr>
struct outputs_smem {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  static constexpr int ldo = ld_of<op_t>(Tr::BK), ldv = ld_of<op_t>(Tr::BV_out),
                       ldacc = ld_of<acc_t>(Tr::BV_out);
  scores_smem<Tr> sc;
  op_t *qg, *S, *v;
  acc_t* o;
  op_t *S_lo, *A_lo;  // the residuals (traits::kResidual), else empty
  __host__ __device__ explicit outputs_smem(carve& c)
      : sc(c),
        qg(c.take<op_t>(kChunk * ldo)),
        S(c.take<op_t>(Tr::BK * ldv)),
        v(c.take<op_t>(kChunk * ldv)),
        o(c.take<acc_t>(kChunk * ldacc)),
        S_lo(c.take<op_t>(Tr::kResidual ? Tr::BK * ldv : 0)),
        A_lo(c.take<op_t>(Tr::kResidual ? kChunk * scores_smem<Tr>::ldao : 0)) {}
};

template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    chunk_outputs_kernel(tensors<S> x, dims d, const typename Tr::acc_t* states, double scale) {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  outputs_smem<Tr> s(c);
  const int n = blockIdx.x, v0 = blockIdx.y * Tr::BV_out, bh = blockIdx.z;
  const int64_t t0 = static_cast<int64_t>(n) * kChunk;
  const head_tensor<const S> q(x.q, d, d.K, bh), k(x.k, d, d.K, bh), g(x.g, d, d.K, bh),
      v(x.v, d, d.V, bh);
  s.sc.zero_scores();
  for (int i = threadIdx.x; i < kChunk * Tr::BV_out; i += kThreads)
    s.o[i / Tr::BV_out * s.ldacc + i % Tr::BV_out] = 0;
  load_slab<kChunk, Tr::BV_out>(s.v, s.ldv, v, t0, v0, convert_to<op_t>{});
  for (int k0 = 0; k0 < d.Kp; k0 += Tr::BK) {
    visit_tile<Tr::BK, Tr::BV_out>(state_tile(states, d, bh, n, k0, v0), d.Vp,
                                   [&](int r, int cc, acc_t a) {
                                     const op_t hi = to_op<op_t>(a);
                                     s.S[r * s.ldv + cc] = hi;
                                     if constexpr (Tr::kResidual)
                                       s.S_lo[r * s.ldv + cc] = to_op<op_t>(a - to_acc_f(hi));
                                   });
    s.sc.add_slab(q, k, g, t0, k0);  // stages 1 and 4 (ends with a barrier)
    prepare_qg<Tr>(s.qg, s.ldo, s.sc.q, s.sc.G, s.sc.ld, Tr::BK, acc_t(1));  // stage 2
    __syncthreads();
    inter_chunk_output<Tr>(s.o, s.ldacc, s.qg, s.ldo, s.S, s.ldv, Tr::BK, Tr::BV_out);  // stage 3
    if constexpr (Tr::kResidual) {
      __syncthreads();
      inter_chunk_output<Tr>(s.o, s.ldacc, s.qg, s.ldo, s.S_lo, s.ldv, Tr::BK, Tr::BV_out);
    }
    __syncthreads();
  }
  s.sc.scores_to_operand(acc_t(1), Tr::kResidual ? s.A_lo : nullptr);
  __syncthreads();
  combine_inner_inter<Tr>(s.o, s.ldacc, s.sc.A_op, s.sc.ld_A_op(), s.v, s.ldv,
                          Tr::BV_out);  // stage 5
  if constexpr (Tr::kResidual) {
    __syncthreads();
    combine_inner_inter<Tr>(s.o, s.ldacc, s.A_lo, scores_smem<Tr>::ldao, s.v, s.ldv, Tr::BV_out);
  }
  __syncthreads();
  const acc_t sc = static_cast<acc_t>(scale);
  store_slab<kChunk, Tr::BV_out>(head_tensor<S>(x.o, d, d.V, bh), t0, v0, s.o, s.ldacc,
                                 [sc](acc_t a) { return to_op<S>(sc * a); });
}

}  // namespace glabench::chunked
