// The forward's kernels. Default (fused) path, two kernels:
// - chunk_states_kernel (stages 1–3 for the state): one block per (K slab, V slab,
//   head) walks the chunks and writes the state before every chunk to the workspace —
//   key features are independent, so K is split across blocks, not reduced;
// - chunk_outputs_kernel (stages 1, 2, 4, 5 and stage 3's output): one block per
//   (chunk, wide V slab, head), all chunks in parallel: o = scale·(q̃·S_n + A·v).
// Separate path (CHUNKED_FUSE_CUDA_STAGES=separate): the seed's five stages as five
// kernels, each writing its result to the workspace for the next.
#pragma once

#include "chunk_io.cuh"
#include "stage1_fwd_decay_cumsum.cuh"
#include "stage2_prepare_qg_kg.cuh"
#include "stage3_fused_chunk_gla_fwd.cuh"
#include "stage4_fwd_inner_chunk.cuh"
#include "stage5_combine.cuh"

namespace glabench::chunked {

// The pointers a forward or backward launch passes (device memory; optional ones null).
template <class S>
struct tensors {
  const S *q, *k, *v, *g, *h0, *d_o, *dht;
  S *o, *ht, *dq, *dk, *dv, *dg, *dh0;
};

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
  load_abi_state<Tr::BV>(s.S, s.lds, x.h0, d, bh, k0, v0, Tr::BK);
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
  store_abi_state<Tr::BV>(x.ht, d, bh, k0, v0, s.S, s.lds, Tr::BK);
}

// ---- chunk_outputs_kernel ------------------------------------------------------------
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

// ---- the separate path: the seed's five stages, five kernels -------------------------
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
  load_abi_state<Tr::BV>(s.S, s.ldacc, x.h0, d, bh, 0, v0, d.Kp);
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
  store_abi_state<Tr::BV>(x.ht, d, bh, 0, v0, s.S, s.ldacc, d.Kp);
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
