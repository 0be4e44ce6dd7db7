// The backward on WMMA (wmma/): the whole backward of the heads no walk takes, and the
// chunks the bf16 gradient walk leaves. Its passes run after chunk_states_kernel
// (forward_wmma.cuh) has recomputed the state before every chunk (states[n], n = 0 … NT).
// With dS_n the gradient of the state after chunk n (dS_{NT−1} = dht; earlier ones from
// later chunks):
//
//   chunk_dstates_kernel   walks the chunks backwards: dS_{n−1} = e^{G[C−1]} ⊙ dS_n +
//                          scale·q̃ᵀ·do; stores every dS_n and Y_n = Σ_v S_n ⊙ dS_n;
//                          dh0 at the end. Grid (K slabs, V slabs, heads).
//   chunk_dv_kernel        dv = k̂·dS_n + scale·Aᵀ·do. Grid (chunks, wide V slabs, heads).
//   chunk_dq_dk_dg_kernel  dq = scale·e^{G} ⊙ (do·S_nᵀ) + intra, dk = e^{G[C−1]−G} ⊙
//                          (v·dS_nᵀ) + intra, dg. Grid (chunks, K slabs, heads).
//   chunk_listed_grads_kernel  dv_chunk and dq_dk_dg_chunk over the chunks the bf16
//                          gradient walk leaves (backward_bf16_mma_grads.cuh), in a grid
//                          of its own beside the walk's.
//
// dg without cancellation. dg_t = Σ over the pairs (s, j) with s ≥ t > j of their
// terms q_s ⊙ k_j ⊙ e^{G_s − G_j}·scale·(do_s·v_j) — h0 counting as a j before the
// sequence, dht as an s after it. Summed over the whole sequence, the textbook
// Σ_{r≥t} (q_r⊙dq_r − k_r⊙dk_r) has terms that grow with T while dg does not. Here the
// pairs split by where s and j lie relative to t's chunk [c0, end]:
//   s in [t, end], j < t    Σ_{s≥t} q_s ⊙ (dq_s without the pair s ← s) minus the pairs
//                           with t ≤ j < s, Σ_{j≥t} k_j ⊙ (intra-chunk dk_j without
//                           j ← j): both inside the chunk, so nothing grows with T;
//   s after the chunk       e^{G[C−1]} ⊙ Y_n (Y_n = Σ_v S_n ⊙ dS_n: j before the chunk)
//                           + Σ_{j<t} k_j ⊙ (inter-chunk dk_j) (j in [c0, t)): sums of
//                           products, nothing subtracted.
#pragma once

#include "forward_wmma.cuh"
#include "wmma/stage4_bwd_inner_chunk.cuh"

namespace glabench::chunked {

// Y partial sums, one per V slab: [B·H][NT][NVs][Kp].
template <class T>
__host__ __device__ inline T* y_partials(T* base, const dims& d, int bh, int n, int vs) {
  return base + ((static_cast<int64_t>(bh) * d.NT + n) * d.NVs + vs) * d.Kp;
}

// ---- chunk_dstates_kernel ------------------------------------------------------------
template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    chunk_dstates_kernel(tensors<S> x, dims d, const typename Tr::acc_t* states,
                         typename Tr::acc_t* dstates, typename Tr::acc_t* ypart, double scale) {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  walk_smem<Tr> s(c);
  const int k0 = blockIdx.x * Tr::BK, v0 = blockIdx.y * Tr::BV, bh = blockIdx.z;
  load_abi_state<Tr::BV>(s.S, s.lds, x.dht, x.state_f32, d, bh, k0, v0, Tr::BK);
  __syncthreads();
  const head_tensor<const S> q(x.q, d, d.K, bh), g(x.g, d, d.K, bh), d_o(x.d_o, d, d.V, bh);
  constexpr int per_row = kThreads / Tr::BK;  // threads summing one row of Y
  static_assert(per_row >= 1 && per_row <= 32 && Tr::BV % per_row == 0);
  slab_loads<kChunk, Tr::BK, S> next_q, next_g;
  slab_loads<kChunk, Tr::BV, S> next_do;
  const int64_t last = static_cast<int64_t>(d.NT - 1) * kChunk;
  next_q.issue(q, last, k0);
  next_g.issue(g, last, k0);
  next_do.issue(d_o, last, v0);
  for (int n = d.NT - 1; n >= 0; --n) {
    const int64_t t0 = static_cast<int64_t>(n) * kChunk;
    next_q.commit(q, t0, k0, [&](int r, int cc, S e) { s.key[r * s.ld + cc] = to_acc_f(e); });
    next_g.commit(g, t0, k0, [&](int r, int cc, S e) { s.G[r * s.ld + cc] = to_acc_f(e); });
    next_do.commit(d_o, t0, v0,
                   [&](int r, int cc, S e) { s.val[r * s.ldv + cc] = to_op<op_t>(to_acc_f(e)); });
    if (n > 0) {  // the previous chunk's loads fly while this one computes
      next_q.issue(q, t0 - kChunk, k0);
      next_g.issue(g, t0 - kChunk, k0);
      next_do.issue(d_o, t0 - kChunk, v0);
    }
    {  // Y_n for this slab: Σ_v S_n ⊙ dS_n over the slab's columns.
      const int r = threadIdx.x / per_row, part = threadIdx.x % per_row;
      const acc_t* S_n = state_tile(states, d, bh, n, k0 + r, v0);
      acc_t sum = 0;
      for (int cc = part; cc < Tr::BV; cc += per_row) sum += S_n[cc] * s.S[r * s.lds + cc];
#pragma unroll
      for (int off = per_row / 2; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      if (part == 0) y_partials(ypart, d, bh, n, blockIdx.y)[k0 + r] = sum;
    }
    __syncthreads();
    fwd_decay_cumsum<Tr::BK>(s.G, s.ld);  // ends with a barrier
    prepare_qg<Tr>(s.key_op, s.ldo, s.key, s.G, s.ld, Tr::BK, static_cast<acc_t>(scale));
    decay_state<Tr>(s.S, s.lds, s.G + (kChunk - 1) * s.ld, Tr::BK, Tr::BV,
                    state_tile(dstates, d, bh, n, k0, v0), d.Vp);
    __syncthreads();
    add_chunk_to_state<Tr>(s.S, s.lds, s.key_op, s.ldo, s.val, s.ldv, Tr::BK, Tr::BV);
    __syncthreads();
  }
  store_abi_state<Tr::BV>(x.dh0, x.state_f32, d, bh, k0, v0, s.S, s.lds, Tr::BK);
}

// ---- chunk_dv_kernel -----------------------------------------------------------------
// dv of chunk n of head bh, columns [v0, v0 + BV_out), in the outputs kernel's shared
// memory with k̂, dS_n, do and dv in the places of q̃, S_n, v and o.
template <class S, class Tr = traits<S>>
__device__ __forceinline__ void dv_chunk(const tensors<S>& x, const dims& d,
                                         const typename Tr::acc_t* dstates, double scale, int n,
                                         int bh, int v0) {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  outputs_smem<Tr> s(c);
  op_t *kg = s.qg, *dS = s.S, *d_o = s.v;
  acc_t* dv = s.o;
  const int64_t t0 = static_cast<int64_t>(n) * kChunk;
  const head_tensor<const S> q(x.q, d, d.K, bh), k(x.k, d, d.K, bh), g(x.g, d, d.K, bh);
  s.sc.zero_scores();
  for (int i = threadIdx.x; i < kChunk * Tr::BV_out; i += kThreads)
    dv[i / Tr::BV_out * s.ldacc + i % Tr::BV_out] = 0;
  load_slab<kChunk, Tr::BV_out>(d_o, s.ldv, head_tensor<const S>(x.d_o, d, d.V, bh), t0, v0,
                                convert_to<op_t>{});
  for (int k0 = 0; k0 < d.Kp; k0 += Tr::BK) {
    load_tile<Tr::BK, Tr::BV_out>(dS, s.ldv, state_tile(dstates, d, bh, n, k0, v0), d.Vp,
                                  convert_to<op_t>{});
    s.sc.add_slab(q, k, g, t0, k0);
    prepare_kg<Tr>(kg, s.ldo, s.sc.k, s.sc.G, s.sc.ld, Tr::BK);
    __syncthreads();
    block_mma<Tr, lay::row, lay::row>(dv, s.ldacc, kg, s.ldo, dS, s.ldv, kChunk, Tr::BV_out, Tr::BK,
                                      true);
    __syncthreads();
  }
  s.sc.scores_to_operand(static_cast<acc_t>(scale));
  __syncthreads();
  // dv += (scale·A)ᵀ · do
  block_mma<Tr, lay::col, lay::row>(dv, s.ldacc, s.sc.A_op, s.sc.ld_A_op(), d_o, s.ldv, kChunk,
                                    Tr::BV_out, kChunk, true);
  __syncthreads();
  store_slab<kChunk, Tr::BV_out>(head_tensor<S>(x.dv, d, d.V, bh), t0, v0, dv, s.ldacc,
                                 [](acc_t a) { return to_op<S>(a); });
}

template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    chunk_dv_kernel(tensors<S> x, dims d, const typename Tr::acc_t* dstates, double scale) {
  dv_chunk<S>(x, d, dstates, scale, blockIdx.x, blockIdx.z, blockIdx.y * Tr::BV_out);
}

// ---- chunk_dq_dk_dg_kernel -----------------------------------------------------------
template <class Tr>
struct grads_smem {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  static constexpr bool kAlias = std::is_same_v<op_t, acc_t>;
  static constexpr int ld = ld_of<acc_t>(Tr::BK), ldo = ld_of<op_t>(Tr::BK),
                       lda = ld_of<acc_t>(kChunk), ldao = kAlias ? lda : ld_of<op_t>(kChunk),
                       ldv = ld_of<op_t>(Tr::BV_grad);
  acc_t *dA, *dq, *dk, *q, *k, *P, *E, *Y;
  typename Tr::gate_t* G;
  op_t *dA_op, *stack;
  // V-loop operands, then (same bytes) the intra products T.
  op_t *d_o, *v, *S, *dS;
  acc_t* T;
  __host__ __device__ explicit grads_smem(carve& c)
      : dA(c.take<acc_t>(kChunk * lda)),
        dq(c.take<acc_t>(kChunk * ld)),
        dk(c.take<acc_t>(kChunk * ld)),
        q(c.take<acc_t>(kChunk * ld)),
        k(c.take<acc_t>(kChunk * ld)),
        P(c.take<acc_t>(kChunk * ld)),
        E(c.take<acc_t>(kChunk * ld)),
        Y(c.take<acc_t>(Tr::BK)),
        G(c.take<typename Tr::gate_t>(kChunk * ld)),
        dA_op(kAlias ? reinterpret_cast<op_t*>(dA) : c.take<op_t>(kChunk * ldao)),
        stack(c.take<op_t>(kStackRows * ldo)) {
    carve v_loop{c.base, c.used};
    d_o = v_loop.take<op_t>(kChunk * ldv);
    v = v_loop.take<op_t>(kChunk * ldv);
    S = v_loop.take<op_t>(Tr::BK * ldv);
    dS = v_loop.take<op_t>(Tr::BK * ldv);
    carve after{c.base, c.used};
    T = after.take<acc_t>(kChunk * ld);
    c.used = v_loop.used > after.used ? v_loop.used : after.used;
  }
};

// dq, dk and dg of chunk n of head bh, features [k0, k0 + BK). dS_n and Y_n come from
// chunk_dstates_kernel (dstates, ypart); kSumY (the bf16 walks' listed chunks, whose dS walk
// leaves no Y): Y_n summed here from S_n and dS_n, a warp a row, and ypart unread.
template <class S, class Tr = traits<S>, bool kSumY = false>
__device__ __forceinline__ void dq_dk_dg_chunk(const tensors<S>& x, const dims& d,
                                               const typename Tr::acc_t* states,
                                               const typename Tr::acc_t* dstates,
                                               const typename Tr::acc_t* ypart, double scale, int n,
                                               int bh, int k0) {
  using acc_t = typename Tr::acc_t;
  using op_t = typename Tr::op_t;
  using G_ = grads_smem<Tr>;
  using gate_t = typename Tr::gate_t;
  constexpr int BK = Tr::BK, BVg = Tr::BV_grad;
  extern __shared__ __align__(128) unsigned char smem[];
  carve c{smem};
  G_ s(c);
  const int64_t t0 = static_cast<int64_t>(n) * kChunk;
  const acc_t sc = static_cast<acc_t>(scale);
  for (int i = threadIdx.x; i < kChunk * kChunk; i += kThreads)
    s.dA[i / kChunk * G_::lda + i % kChunk] = 0;
  for (int i = threadIdx.x; i < kChunk * BK; i += kThreads) {
    s.dq[i / BK * G_::ld + i % BK] = 0;
    s.dk[i / BK * G_::ld + i % BK] = 0;
  }
  const head_tensor<const S> hd_o(x.d_o, d, d.V, bh), hv(x.v, d, d.V, bh);
  // dA = do·vᵀ, dq_inter = do·S_nᵀ, dk_inter = v·dS_nᵀ over V slabs. A slab's four loads
  // are in flight together, one memory latency a slab, except in bf16: its chunks run
  // inside the gradient walk, whose registers are full (one load at a time there).
  constexpr bool kOneAtATime = std::is_same_v<S, __nv_bfloat16>;
  slab_loads<kChunk, BVg, S> do_loads, v_loads;
  tile_loads<BK, BVg, acc_t> S_loads, dS_loads;
  auto into = [](op_t* dst) {  // a loaded element, converted, into a V-loop operand tile
    return [dst](int r, int cc, auto x) { dst[r * G_::ldv + cc] = convert_to<op_t>{}(x); };
  };
  for (int v0 = 0; v0 < d.Vp; v0 += BVg) {
    auto commit_do = [&] { do_loads.commit(hd_o, t0, v0, into(s.d_o)); };
    auto commit_v = [&] { v_loads.commit(hv, t0, v0, into(s.v)); };
    auto commit_S = [&] { S_loads.commit(into(s.S)); };
    do_loads.issue(hd_o, t0, v0);
    if constexpr (kOneAtATime) commit_do();
    v_loads.issue(hv, t0, v0);
    if constexpr (kOneAtATime) commit_v();
    S_loads.issue(state_tile(states, d, bh, n, k0, v0), d.Vp);
    if constexpr (kOneAtATime) commit_S();
    dS_loads.issue(state_tile(dstates, d, bh, n, k0, v0), d.Vp);
    if constexpr (!kOneAtATime) commit_do(), commit_v(), commit_S();
    dS_loads.commit(into(s.dS));
    __syncthreads();
    block_mma<Tr, lay::row, lay::col>(s.dA, G_::lda, s.d_o, G_::ldv, s.v, G_::ldv, kChunk, kChunk,
                                      BVg, true);
    int shift = mma_tiles<Tr>(kChunk, kChunk);
    block_mma<Tr, lay::row, lay::col>(s.dq, G_::ld, s.d_o, G_::ldv, s.S, G_::ldv, kChunk, BK, BVg,
                                      true, shift);
    shift += mma_tiles<Tr>(kChunk, BK);
    block_mma<Tr, lay::row, lay::col>(s.dk, G_::ld, s.v, G_::ldv, s.dS, G_::ldv, kChunk, BK, BVg,
                                      true, shift);
    __syncthreads();
  }
  const head_tensor<const S> hq(x.q, d, d.K, bh), hk(x.k, d, d.K, bh), hg(x.g, d, d.K, bh);
  load_slab<kChunk, BK>(s.q, G_::ld, hq, t0, k0, convert_to_acc{});
  load_slab<kChunk, BK>(s.k, G_::ld, hk, t0, k0, convert_to_acc{});
  load_gates<Tr>(s.G, s.E, G_::ld, hg, t0, k0);
  if constexpr (!kSumY) {
    for (int cc = threadIdx.x; cc < BK; cc += kThreads) {
      acc_t sum = 0;
      for (int vs = 0; vs < d.NVs; ++vs) sum += y_partials(ypart, d, bh, n, vs)[k0 + cc];
      s.Y[cc] = sum;
    }
  } else {
    const int lane = threadIdx.x & 31;
    for (int cc = threadIdx.x >> 5; cc < BK; cc += kThreads / 32) {
      const acc_t* sr = state_tile(states, d, bh, n, k0 + cc, 0);
      const acc_t* dr = state_tile(dstates, d, bh, n, k0 + cc, 0);
      acc_t sum = 0;
      if (k0 + cc < d.Kp)
        for (int v = lane; v < d.Vp; v += 32) sum += sr[v] * dr[v];
      for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      if (lane == 0) s.Y[cc] = sum;
    }
  }
  // dA ← scale·dA, and as operand.
  for (int i = threadIdx.x; i < kChunk * kChunk; i += kThreads) {
    const int r = i / kChunk, cc = i % kChunk;
    const acc_t a = sc * s.dA[r * G_::lda + cc];
    s.dA[r * G_::lda + cc] = a;
    if constexpr (!G_::kAlias) s.dA_op[r * G_::ldao + cc] = to_op<op_t>(a);
  }
  __syncthreads();
  fwd_decay_cumsum<BK>(s.G, G_::ld);  // ends with a barrier
  // dq without the diagonal pair: inter + below-diagonal blocks + diagonal blocks.
  sub_chunk_keys<Tr>(s.stack, G_::ldo, s.k, s.G, G_::ld, BK);
  __syncthreads();
  inner_chunk_dq_products<Tr>(s.T, G_::ld, s.dA_op, G_::ldao, s.stack, G_::ldo, BK);
  diagonal_blocks<Tr, false>(s.P, s.dA, G_::lda, s.k, s.E, G_::ld, BK);  // P: free until dk
  __syncthreads();
  for (int i = threadIdx.x; i < kChunk * BK; i += kThreads) {
    const int r = i / BK, cc = i % BK;
    const gate_t Gr = s.G[r * G_::ld + cc];
    acc_t v = sc * s.dq[r * G_::ld + cc] * Tr::exp(static_cast<acc_t>(Gr)) + s.P[r * G_::ld + cc];
    if (r >= kSub)
      v += Tr::exp(static_cast<acc_t>(Gr - s.G[(r / kSub * kSub) * G_::ld + cc])) *
           s.T[r * G_::ld + cc];
    s.dq[r * G_::ld + cc] = v;
  }
  __syncthreads();
  // dk without the diagonal pair.
  sub_chunk_queries_after<Tr>(s.stack, G_::ldo, s.q, s.G, G_::ld, BK);
  __syncthreads();
  inner_chunk_dk_products<Tr>(s.T, G_::ld, s.dA_op, G_::ldao, s.stack, G_::ldo, BK);
  diagonal_blocks<Tr, true>(s.P, s.dA, G_::lda, s.q, s.E, G_::ld, BK);
  __syncthreads();
  // dk without the diagonal pair; P = k ⊙ (inter-chunk dk), T = q ⊙ dq − k ⊙ (intra-chunk dk).
  const gate_t* G_last = s.G + (kChunk - 1) * G_::ld;
  for (int i = threadIdx.x; i < kChunk * BK; i += kThreads) {
    const int r = i / BK, cc = i % BK, e = r * G_::ld + cc;
    const gate_t Gr = s.G[e];
    const acc_t inter = s.dk[e] * Tr::exp(static_cast<acc_t>(G_last[cc] - Gr));
    acc_t intra = s.P[e];  // the diagonal block's, then P's own below
    if (r < kChunk - kSub)
      intra += Tr::exp(static_cast<acc_t>(s.G[(r / kSub * kSub + kSub - 1) * G_::ld + cc] - Gr)) *
               s.T[e];
    s.dk[e] = inter + intra;
    s.P[e] = s.k[e] * inter;
    s.T[e] = s.q[e] * s.dq[e] - s.k[e] * intra;
  }
  __syncthreads();
  // dg_t = Σ_{r≥t} T_r + Σ_{r<t} P_r + e^{G[C−1]} ⊙ Y_n per key feature (E: scratch);
  // then the diagonal pair back into dq and dk.
  dg_sums<BK>([&](int r, int cc) { return s.T[r * G_::ld + cc]; },
              [&](int r, int cc) { return s.P[r * G_::ld + cc]; },
              [&](int r, int cc, acc_t x) { s.T[r * G_::ld + cc] = x; },
              [&](int cc) { return Tr::exp(static_cast<acc_t>(G_last[cc])) * s.Y[cc]; }, s.E);
  __syncthreads();
  for (int i = threadIdx.x; i < kChunk * BK; i += kThreads) {
    const int r = i / BK, cc = i % BK;
    const acc_t diag = s.dA[r * G_::lda + r];
    s.dq[r * G_::ld + cc] += diag * s.k[r * G_::ld + cc];
    s.dk[r * G_::ld + cc] += diag * s.q[r * G_::ld + cc];
  }
  __syncthreads();
  auto out = [](acc_t a) { return to_op<S>(a); };
  store_slab<kChunk, BK>(head_tensor<S>(x.dq, d, d.K, bh), t0, k0, s.dq, G_::ld, out);
  store_slab<kChunk, BK>(head_tensor<S>(x.dk, d, d.K, bh), t0, k0, s.dk, G_::ld, out);
  store_slab<kChunk, BK>(head_tensor<S>(x.dg, d, d.K, bh), t0, k0, s.T, G_::ld, out);
}

template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    chunk_dq_dk_dg_kernel(tensors<S> x, dims d, const typename Tr::acc_t* states,
                          const typename Tr::acc_t* dstates, const typename Tr::acc_t* ypart,
                          double scale) {
  dq_dk_dg_chunk<S>(x, d, states, dstates, ypart, scale, blockIdx.x, blockIdx.z,
                    blockIdx.y * Tr::BK);
}

// The WMMA items of a chunk: its dv slabs, then its dq/dk/dg K slabs.
struct chunk_items {
  int dv, k;
  __host__ __device__ int total() const { return dv + k; }
};
template <class Tr>
__host__ __device__ chunk_items items_of(const dims& d) {
  return {d.Vp / Tr::BV_out, d.Kp / Tr::BK};
}

// The items of `list` ([0] the count, then (bh·NT + n)·items_of(d).total() + part each:
// part < dv slabs a dv slab of chunk n of head bh, else a dq/dk/dg K slab): block b of
// the grid takes items b, b + gridDim.x, … (an empty list: every block returns at once).
// Y_n is summed from the states (the bf16 walks leave no ypart). Apart from the walk, whose
// code and registers these bodies would otherwise share, on a stream beside it
// (launch.cu's launch_grads_walk).
template <class S, class Tr = traits<S>>
__global__ void __launch_bounds__(kThreads)
    chunk_listed_grads_kernel(tensors<S> x, dims d, const typename Tr::acc_t* states,
                              const typename Tr::acc_t* dstates, double scale, const int* list) {
  const int dv_slabs = items_of<Tr>(d).dv, per_chunk = items_of<Tr>(d).total();
  const int blocks = static_cast<int>(gridDim.x);
  for (int i = static_cast<int>(blockIdx.x); i < list[0]; i += blocks) {
    const int chunk = list[1 + i] / per_chunk, part = list[1 + i] % per_chunk;
    const int n = chunk % d.NT, bh = chunk / d.NT;
    if (part < dv_slabs)
      dv_chunk<S>(x, d, dstates, scale, n, bh, part * Tr::BV_out);
    else
      dq_dk_dg_chunk<S, Tr, true>(x, d, states, dstates, nullptr, scale, n, bh,
                                  (part - dv_slabs) * Tr::BK);
    __syncthreads();  // the next item reuses shared memory
  }
}

}  // namespace glabench::chunked
