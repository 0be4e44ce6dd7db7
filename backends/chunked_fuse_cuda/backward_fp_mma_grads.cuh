// fp32 and fp64 dq, dk and dg on mma.sync (3×TF32 and DMMA: fp32_fp64_mma/mma.cuh), after
// the fp walks have left S_n and R_n (backward_fp_walks.cuh). The terms, their references
// and dg's sums are dq_dk_dg_chunk's (backward_wmma.cuh, wmma/stage4_bwd_inner_chunk.cuh);
// what differs is where they are held.
//
// A block per (64-token chunk n, K slab of BK features, head), 8 warps; a chunk's K slabs
// form clusters of kCluster blocks (launch.cu: fp64 four where there are four slabs, Kp =
// 128; else two where an even count), which share dA: block r of a cluster computes dA's
// columns W·r … (W = C/kCluster).
// Warp w owns rows 16·(w/2) … of the chunk (its sub-chunk) and, of every C×BK product, the
// columns (BK/2)·(w%2) …, of the block's W columns of dA the half (W/2)·(w%2) …:
//   1. the V loop: dA = do·vᵀ, dq_inter = do·S_nᵀ and dk_inter = v·R_nᵀ accumulate in
//      registers over V slabs of BVS columns, double-buffered by cp.async; Y = Σ_v S_n ⊙ R_n;
//   2. dA (scaled) into shared memory over the slabs' buffers, its other columns copied from
//      the cluster's other blocks (distributed shared memory), with the cumulative gates G
//      and E = e^{g} (q and k came with the first slab);
//   3. the diagonal blocks, a thread a (column, sub-chunk) (diagonal_column);
//   4. dq's rows against the keys before their sub-chunk, in registers;
//   5. dk's rows against the queries after it;
//   6. each warp finishes its own elements: dq and dk to global memory from registers,
//      dg's summands T = q ⊙ dq − k ⊙ dk_intra and P = k ⊙ dk_inter in place of q and k;
//   7. dg's suffix and prefix sums (dg_sums), stored from shared memory.
// R_n = e^{−g[first token of chunk n+1]} ⊙ dS_n by rows (reversed_tokens.hpp), so dk_inter
// and Y take that factor per feature after their sums. 97 KB of shared memory (fp32), 113 KB
// (fp64): two blocks an SM, ≤ 128 registers (fp64 spills 92–132 bytes; at one block an SM
// its fwd+bwd took ×1.16 on the H100).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "fp32_fp64_mma/mma.cuh"
#include "reversed_tokens.hpp"
#include "wmma/chunk_io.cuh"
#include "wmma/stage1_fwd_decay_cumsum.cuh"
#include "wmma/stage4_bwd_inner_chunk.cuh"

namespace glabench::chunked::fp_grads {

using walk_fp::acc_col;
using walk_fp::acc_row;
using walk_fp::swz;

template <class T>
struct sizes {
  using P = walk_fp::mma_policy<T>;
  static constexpr int BK = traits<T>::BK;  // 64 fp32, 32 fp64: the WMMA kernels' Kp slabs
  static constexpr int BVS = 128 / static_cast<int>(sizeof(T));  // the V loop's slab: 32, 16
  static constexpr int RB = kSub / P::TM;                        // a warp's row blocks: 1
  static constexpr int CK = BK / 2 / P::TN;                      // its dq and dk column tiles: 4, 2
  static_assert(kWarps == 2 * kSubs && CK >= 2 && CK % 2 == 0);
  // A cluster of kCluster blocks: a block's dA columns, a warp's column tiles of them.
  template <int kCluster>
  static constexpr int dA_cols = kChunk / kCluster;
  template <int kCluster>
  static constexpr int CA = dA_cols<kCluster> / 2 / P::TN;
};

// Shared memory, in bytes. q, k, E and the diagonal blocks' dk sums Xk ([C][BK] in T), G
// ([C][BK] in double) and dA ([C][C] in T), each swizzled (swz); E's tile takes dq's sums
// (Xq) once read. The V loop's two buffers (do and v [C][BVS], S_n and R_n [BK][BVS]) lie
// over E, G, dA and Xk, which are written after it. Then Y and the R_n factors.
template <class T>
struct layout {
  using Z = sizes<T>;
  static constexpr int t = static_cast<int>(sizeof(T)), tile = kChunk * Z::BK * t;
  static constexpr int q = 0, k = tile, E = 2 * tile, G = 3 * tile, dA = G + kChunk * Z::BK * 8,
                       Xk = dA + kChunk * kChunk * t, stage = E;
  static constexpr int stage_tokens = kChunk * Z::BVS, stage_state = Z::BK * Z::BVS;
  static constexpr int stage_elems = 2 * stage_tokens + 2 * stage_state;
  static constexpr int Y = Xk + tile, factor = Y + Z::BK * t, bytes = factor + Z::BK * t;
  static_assert(stage + 2 * stage_elems * t <= Y, "buffers inside");
  // Two blocks of 256 threads an SM: 228 KB, less 1 KB each that the runtime keeps.
  static_assert(2 * (bytes + 1024) <= 228 * 1024, "two blocks an SM");
};

template <class T>
__device__ __forceinline__ T exp_of(double x) {
  return traits<T>::exp(static_cast<T>(x));
}

// kCluster: the cluster's blocks along grid y (the launch's), 1 where each block takes all
// of dA. In: the tokens' storage — T, or fp16 for fp32 (the halves land unswizzled in the
// first half of their own float tile, and each thread widens those it loaded once every
// thread has read its own: one barrier more a V slab, one for q and k).
template <class T, int kCluster, class In = T>
__global__ void __launch_bounds__(kThreads, 2)
    chunk_fp_grads_kernel(tensors<In> x, dims d, const T* states, const T* dstates, double scale) {
  using Z = sizes<T>;
  using L = layout<T>;
  using P = walk_fp::mma_policy<T>;
  using afrag = typename P::afrag;
  using bfrag = typename P::bfrag;
  constexpr int BK = Z::BK, BVS = Z::BVS, RB = Z::RB, CK = Z::CK, NACC = P::NACC;
  constexpr int W = Z::template dA_cols<kCluster>, CA = Z::template CA<kCluster>;
  static_assert((CA == 1 || CA % 2 == 0) && kChunk % kCluster == 0);
  extern __shared__ __align__(128) unsigned char smem[];
  T* q_s = reinterpret_cast<T*>(smem + L::q);
  T* k_s = reinterpret_cast<T*>(smem + L::k);
  T* E_s = reinterpret_cast<T*>(smem + L::E);
  double* G_s = reinterpret_cast<double*>(smem + L::G);
  T* dA_s = reinterpret_cast<T*>(smem + L::dA);
  T* stage = reinterpret_cast<T*>(smem + L::stage);
  T* Y_s = reinterpret_cast<T*>(smem + L::Y);
  T* factor = reinterpret_cast<T*>(smem + L::factor);
  T* Xq = E_s;
  T* Xk = reinterpret_cast<T*>(smem + L::Xk);
  auto at_k = [](int r, int c) { return swz<T, BK>(r, c); };
  auto at_G = [](int r, int c) { return swz<double, BK>(r, c); };
  auto at_A = [](int r, int c) { return swz<T, kChunk>(r, c); };
  auto at_V = [](int r, int c) { return swz<T, BVS>(r, c); };

  const int n = blockIdx.x, k0 = blockIdx.y * BK, bh = blockIdx.z;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int rank = kCluster == 1 ? 0 : blockIdx.y % kCluster;  // in the cluster
  const int sub = warp / 2, row0 = sub * kSub, colA = W * rank + W / 2 * (warp % 2),
            colK = BK / 2 * (warp % 2);
  const int64_t t0 = static_cast<int64_t>(n) * kChunk;
  const int64_t head = head_row(bh, d.H, d.T);
  constexpr int kVec = 16 / sizeof(T);
  constexpr bool kHalf = !std::is_same_v<In, T>;
  static_assert(!kHalf || (std::is_same_v<T, float> && sizeof(In) == 2), "fp16 into fp32");
  constexpr int kIn = 16 / sizeof(In);  // a 16-byte vector's tokens' elements
  // Where a 16-byte vector of a COLS-column tile's row r, column c lands, in bytes.
  auto landing = [](int r, int c, auto cols) {
    constexpr int COLS = decltype(cols)::value;
    if constexpr (kHalf) return (r * COLS + c) * static_cast<int>(sizeof(In));
    return swz<T, COLS>(r, c) * static_cast<int>(sizeof(T));
  };
  using k_cols = std::integral_constant<int, BK>;
  using v_cols = std::integral_constant<int, BVS>;
  // fp16: 8 halves into the swizzled floats at (r, c) and (r, c + 4) of a COLS-column tile.
  auto widen = [](T* tile, int r, int c, const uint4& h, auto cols) {
    constexpr int COLS = decltype(cols)::value;
    tc::widen_halves(h, 1.f, tile + swz<T, COLS>(r, c), tile + swz<T, COLS>(r, c + 4));
  };
  auto staged = [](const T* tile, int r, int c, auto cols) {
    constexpr int COLS = decltype(cols)::value;
    return *reinterpret_cast<const uint4*>(reinterpret_cast<const In*>(tile) + r * COLS + c);
  };

  {  // R_n's row factors: e^{g} of the first token of chunk n + 1 (1 after the last)
    const int64_t next = reversed::dS_factor_token(n, kChunk, d.T);
    for (int c = threadIdx.x; c < BK; c += kThreads)
      factor[c] = next >= 0 && k0 + c < d.K
                      ? traits<T>::exp(static_cast<T>(x.g[(head + next * d.H) * d.K + k0 + c]))
                      : T(1);
  }
  // q and k (beside the V loop's buffers, loaded with its first slab), and a slab's loads.
  const uint32_t sm = tc::smem_addr(smem);
  for (int i = threadIdx.x; i < kChunk * BK / kIn; i += kThreads) {
    const int r = i / (BK / kIn), c = i % (BK / kIn) * kIn;
    const bool in = t0 + r < d.T && k0 + c < d.K;
    const int64_t src = in ? (head + (t0 + r) * d.H) * d.K + k0 + c : 0;
    tc::cp_async16(sm + L::q + landing(r, c, k_cols{}), x.q + src, in ? 16 : 0);
    tc::cp_async16(sm + L::k + landing(r, c, k_cols{}), x.k + src, in ? 16 : 0);
  }
  auto buffer = [&](int b) { return stage + b * L::stage_elems; };
  auto issue_slab = [&](int b, int v0) {
    const uint32_t base = tc::smem_addr(buffer(b));
    constexpr int per_row = BVS / kIn, state_per_row = BVS / kVec;  // tokens' in In, states' in T
    for (int i = threadIdx.x; i < kChunk * per_row; i += kThreads) {
      const int r = i / per_row, c = i % per_row * kIn;
      const bool in = t0 + r < d.T && v0 + c < d.V;
      const int64_t src = in ? (head + (t0 + r) * d.H) * d.V + v0 + c : 0;
      const uint32_t dst = base + landing(r, c, v_cols{});
      tc::cp_async16(dst, x.d_o + src, in ? 16 : 0);
      tc::cp_async16(dst + L::stage_tokens * sizeof(T), x.v + src, in ? 16 : 0);
    }
    const T* S_n = state_tile(states, d, bh, n, k0, v0);
    const T* R_n = state_tile(dstates, d, bh, n, k0, v0);
    for (int i = threadIdx.x; i < BK * state_per_row; i += kThreads) {
      const int r = i / state_per_row, c = i % state_per_row * kVec;
      const uint32_t dst = base + (2 * L::stage_tokens + at_V(r, c)) * sizeof(T);
      tc::cp_async16(dst, S_n + static_cast<int64_t>(r) * d.Vp + c, 16);
      tc::cp_async16(dst + L::stage_state * sizeof(T), R_n + static_cast<int64_t>(r) * d.Vp + c,
                     16);
    }
    tc::cp_async_commit();
  };

  // 1. The V loop.
  T acc_A[RB][CA][NACC] = {}, acc_q[RB][CK][NACC] = {}, acc_k[RB][CK][NACC] = {};
  constexpr int per_row = kThreads / BK;  // threads summing one row of Y
  static_assert(per_row >= 1 && per_row <= 32 && BVS % per_row == 0);
  T y = 0;
  const head_tensor<const In> hg(x.g, d, d.K, bh);
  slab_loads<kChunk, BK, In> g_loads;
  const int slabs = d.Vp / BVS;
  issue_slab(0, 0);
  for (int s = 0; s < slabs; ++s) {
    if (s + 1 < slabs) {
      issue_slab((s + 1) & 1, (s + 1) * BVS);
      tc::cp_async_wait<1>();
    } else {
      tc::cp_async_wait<0>();
    }
    if constexpr (kHalf) {  // this thread's halves of do and v, read; then widened
      constexpr int per_row = BVS / kIn;
      static_assert(kChunk * per_row == kThreads, "a vector a thread");
      const int r = threadIdx.x / per_row, c = threadIdx.x % per_row * kIn;
      T* dO = buffer(s & 1);
      const uint4 h_do = staged(dO, r, c, v_cols{}),
                  h_v = staged(dO + L::stage_tokens, r, c, v_cols{});
      __syncthreads();
      widen(dO, r, c, h_do, v_cols{});
      widen(dO + L::stage_tokens, r, c, h_v, v_cols{});
    }
    __syncthreads();
    const T* dO = buffer(s & 1);
    const T* v = dO + L::stage_tokens;
    const T* S_n = v + L::stage_tokens;
    const T* R_n = S_n + L::stage_state;
    // acc[ct] += a·B, B the tile's rows col0 … as columns, two column tiles a load (one
    // where there is one). a is do or v, as stored, and so is B where it is v (tokens_b):
    // exact in TF32 where In's are, their small terms left out (mma.cuh).
    auto row_products = [&](auto& acc, const afrag& a, const T* tile, int col0, int kk,
                            auto tokens_b) {
      constexpr bool kExactA = walk_fp::exact_in_tf32<In>;
      constexpr bool kExactB = kExactA && decltype(tokens_b)::value;
      constexpr int tiles = sizeof(acc) / sizeof(acc[0]);
      if constexpr (tiles == 1) {  // fp64 in clusters of four: one column tile of dA
        P::mma_rn(acc[0], a, P::template lds_b<BVS>(tile, nullptr, col0, kk, lane));
      } else {
#pragma unroll
        for (int ct = 0; ct < tiles; ct += 2) {
          bfrag b[2];
          P::template lds_b2_unsplit<BVS>(b, tile, col0 + ct * P::TN, kk, lane);
          P::template mma_rn<kExactA, kExactB>(acc[ct], a, b[0]);
          P::template mma_rn<kExactA, kExactB>(acc[ct + 1], a, b[1]);
        }
      }
    };
    // A k-step's products one operand at a time: the accumulators take 48 of fp32's 128
    // registers.
#pragma unroll 1
    for (int kk = 0; kk < BVS; kk += P::TK) {
#pragma unroll
      for (int rb = 0; rb < RB; ++rb) {
        const afrag a_do = P::template lds_a_unsplit<BVS>(dO, row0 + rb * P::TM, kk, lane);
        row_products(acc_A[rb], a_do, v, colA, kk, std::true_type{});
        row_products(acc_q[rb], a_do, S_n, colK, kk, std::false_type{});
        const afrag a_v = P::template lds_a_unsplit<BVS>(v, row0 + rb * P::TM, kk, lane);
        row_products(acc_k[rb], a_v, R_n, colK, kk, std::false_type{});
      }
    }
    {  // Y over the slab's columns
      const int r = threadIdx.x / per_row, part = threadIdx.x % per_row;
      T sum = 0;
#pragma unroll
      for (int c = part; c < BVS; c += per_row) sum += S_n[at_V(r, c)] * R_n[at_V(r, c)];
#pragma unroll
      for (int off = per_row / 2; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      y += sum;
    }
    __syncthreads();
  }
  if constexpr (kHalf) {  // q and k: this thread's halves, read (the V loop waited for
    // them), then widened ahead of the barrier before stage 3
    constexpr int kRounds = kChunk * BK / kIn / kThreads;
    static_assert(kRounds * kThreads * kIn == kChunk * BK, "whole rounds");
    uint4 h[kRounds][2];
#pragma unroll
    for (int it = 0; it < kRounds; ++it) {
      const int i = threadIdx.x + it * kThreads, r = i / (BK / kIn), c = i % (BK / kIn) * kIn;
      h[it][0] = staged(q_s, r, c, k_cols{}), h[it][1] = staged(k_s, r, c, k_cols{});
    }
    __syncthreads();
#pragma unroll
    for (int it = 0; it < kRounds; ++it) {
      const int i = threadIdx.x + it * kThreads, r = i / (BK / kIn), c = i % (BK / kIn) * kIn;
      widen(q_s, r, c, h[it][0], k_cols{}), widen(k_s, r, c, h[it][1], k_cols{});
    }
  }

  // f(rb, ct, e, row, column) over the warp's accumulator elements of a product with CT
  // column tiles from column col0.
  auto for_each = [&](auto CT, int col0, auto f) {
#pragma unroll
    for (int rb = 0; rb < RB; ++rb)
#pragma unroll
      for (int ct = 0; ct < decltype(CT)::value; ++ct)
#pragma unroll
        for (int e = 0; e < NACC; ++e)
          f(rb, ct, e, row0 + rb * P::TM + acc_row(lane, e), col0 + ct * P::TN + acc_col(lane, e));
  };
  // out[ct][i] = f(column) for the lane's two columns of each of its CK dq and dk tiles (the
  // columns of its accumulator elements i and i + 2).
  auto per_column = [&](auto& out, auto f) {
#pragma unroll
    for (int ct = 0; ct < CK; ++ct)
#pragma unroll
      for (int i = 0; i < 2; ++i) out[ct][i] = f(colK + ct * P::TN + acc_col(lane, i));
  };
  using dA_tiles = std::integral_constant<int, CA>;
  using dq_dk_tiles = std::integral_constant<int, CK>;

  // 2. dA, the cumulative gates G and E = e^{g} in shared memory.
  const T sc = static_cast<T>(scale);
  for_each(dA_tiles{}, colA,
           [&](int rb, int ct, int e, int r, int c) { dA_s[at_A(r, c)] = sc * acc_A[rb][ct][e]; });
  g_loads.issue(hg, t0, k0);
  if constexpr (kCluster > 1) {  // the other blocks' columns of dA, once each has written its
    tc::cluster_arrive();
    tc::cluster_wait();
    for (int p = 1; p < kCluster; ++p) {
      const int from = (rank + p) % kCluster;
      const T* peer = tc::cluster_peer(dA_s, from);
      for (int i = threadIdx.x; i < kChunk * W; i += kThreads) {
        const int at = at_A(i / W, W * from + i % W);
        dA_s[at] = peer[at];
      }
    }
    tc::cluster_arrive();  // done reading the others' dA: waited for before the block exits
  }
  g_loads.commit(hg, t0, k0, [&](int r, int c, In gi) {
    const T g = static_cast<T>(gi);
    G_s[at_G(r, c)] = static_cast<double>(g);
    E_s[at_k(r, c)] = traits<T>::exp(g);
  });
  if (threadIdx.x % per_row == 0) Y_s[threadIdx.x / per_row] = factor[threadIdx.x / per_row] * y;
  __syncthreads();
  fwd_decay_cumsum_at<BK>(G_s, at_G);  // ends with a barrier

  // 3. The diagonal blocks, a thread a (column, sub-chunk) (where there are more threads
  // than those, fp64, the first half takes dq's, the second dk's): dq's sums into E's tile
  // once every thread has read E, dk's held until dA is read.
  constexpr int kItems = kSubs * BK, kParts = kThreads / kItems;
  static_assert(kParts * kItems == kThreads && kParts <= 2);
  const int item = threadIdx.x % kItems, part = threadIdx.x / kItems;
  const int dc = item % BK, d0 = item / BK * kSub;
  const bool takes_dq = kParts == 1 || part == 0, takes_dk = kParts == 1 || part == 1;
  {
    auto dA_at = [&](int i, int j) { return dA_s[at_A(d0 + i, d0 + j)]; };
    auto E_at = [&](int u) { return E_s[at_k(d0 + u, dc)]; };
    T sums[kSub];
    if (takes_dk) {
      diagonal_column<true>(
          sums, dA_at, [&](int u) { return q_s[at_k(d0 + u, dc)]; }, E_at);
#pragma unroll
      for (int u = 0; u < kSub; ++u) Xk[at_k(d0 + u, dc)] = sums[u];
    }
    if (takes_dq)
      diagonal_column<false>(
          sums, dA_at, [&](int u) { return k_s[at_k(d0 + u, dc)]; }, E_at);
    __syncthreads();  // E read: its tile takes dq's sums
    if (takes_dq)
#pragma unroll
      for (int u = 0; u < kSub; ++u) Xq[at_k(d0 + u, dc)] = sums[u];
  }
  __syncthreads();

  // t += A·B over k in [k_begin, k_end): a(rb, k) the warp's A fragments, b(k, column)
  // B's elements.
  auto products = [&](auto& t, int k_begin, int k_end, auto a_of, auto b) {
    for (int k = k_begin; k < k_end; k += P::TK) {
      afrag a[RB];
#pragma unroll
      for (int rb = 0; rb < RB; ++rb) a[rb] = a_of(rb, k);
#pragma unroll
      for (int ct = 0; ct < CK; ++ct) {
        const bfrag bf = P::load_b(b, k, colK + ct * P::TN, lane);
#pragma unroll
        for (int rb = 0; rb < RB; ++rb) P::mma_rn(t[rb][ct], a[rb], bf);
      }
    }
  };
  // 4. dq's rows against the keys before the sub-chunk, k[j]·e^{G[a0] − G[j]} (a0 its
  // first token); then dq but for the diagonal pair.
  const int a0 = row0, b1 = row0 + kSub - 1;
  {
    T t[RB][CK][NACC] = {};
    products(
        t, 0, a0,
        [&](int rb, int j0) {
          return P::template lds_a_unsplit<kChunk>(dA_s, a0 + rb * P::TM, j0, lane);
        },
        [&](int j, int c) {
          return k_s[at_k(j, c)] * exp_of<T>(G_s[at_G(a0, c)] - G_s[at_G(j, c)]);
        });
    // e^{G[r]} = e^{G[r] − G[a0]}·e^{G[a0]}, both ≤ 1: one exponential an element, one a
    // column.
    T head_of[CK][2];
    per_column(head_of, [&](int c) { return exp_of<T>(G_s[at_G(a0, c)]); });
    for_each(dq_dk_tiles{}, colK, [&](int rb, int ct, int e, int r, int c) {
      const T w = exp_of<T>(G_s[at_G(r, c)] - G_s[at_G(a0, c)]);
      acc_q[rb][ct][e] = sc * acc_q[rb][ct][e] * (w * head_of[ct][e % 2]) + Xq[at_k(r, c)] +
                         (a0 > 0 ? w * t[rb][ct][e] : T(0));
    });
  }
  // 5. dk's rows against the queries after the sub-chunk, q[i]·e^{G[i] − G[b1]} (b1 its
  // last token): acc_k becomes dk_inter, t dk_intra but for the diagonal block.
  T t[RB][CK][NACC] = {};
  products(
      t, b1 + 1, kChunk,
      [&](int rb, int i0) {  // A(j, i) = dA[i][j]
        return P::load_a([&](int j, int i) { return dA_s[at_A(i, j)]; }, row0 + rb * P::TM, i0,
                         lane);
      },
      [&](int i, int c) {
        return q_s[at_k(i, c)] * exp_of<T>(G_s[at_G(i, c)] - G_s[at_G(b1, c)]);
      });
  // e^{G[C−1] − G[r]} = e^{G[C−1] − G[b1]}·e^{G[b1] − G[r]}, both ≤ 1.
  T tail_of[CK][2];
  per_column(tail_of, [&](int c) {
    return factor[c] * exp_of<T>(G_s[at_G(kChunk - 1, c)] - G_s[at_G(b1, c)]);
  });
  for_each(dq_dk_tiles{}, colK, [&](int rb, int ct, int e, int r, int c) {
    const T w = exp_of<T>(G_s[at_G(b1, c)] - G_s[at_G(r, c)]);
    acc_k[rb][ct][e] *= tail_of[ct][e % 2] * w;
    t[rb][ct][e] = b1 < kChunk - 1 ? w * t[rb][ct][e] : T(0);
  });
  __syncthreads();  // every warp's products have read q and k
  // 6. dk; dg's summands T = q ⊙ dq − k ⊙ dk_intra and P = k ⊙ dk_inter in place of q and
  // k; the diagonal pair.
  for_each(dq_dk_tiles{}, colK, [&](int rb, int ct, int e, int r, int c) {
    const T inter = acc_k[rb][ct][e], intra = Xk[at_k(r, c)] + t[rb][ct][e];
    const T qv = q_s[at_k(r, c)], kv = k_s[at_k(r, c)], diag = dA_s[at_A(r, r)];
    k_s[at_k(r, c)] = kv * inter;                          // P
    q_s[at_k(r, c)] = qv * acc_q[rb][ct][e] - kv * intra;  // T
    acc_q[rb][ct][e] += diag * kv;
    acc_k[rb][ct][e] = inter + intra + diag * qv;
  });
  // dq and dk from registers: an element pair (columns c, c + 1) a store.
#pragma unroll
  for (int rb = 0; rb < RB; ++rb)
#pragma unroll
    for (int ct = 0; ct < CK; ++ct)
#pragma unroll
      for (int e = 0; e < NACC; e += 2) {
        const int r = row0 + rb * P::TM + acc_row(lane, e),
                  c = colK + ct * P::TN + acc_col(lane, e);
        if (t0 + r >= d.T || k0 + c >= d.K) continue;
        const int64_t at = (head + (t0 + r) * d.H) * d.K + k0 + c;
        if constexpr (kHalf) {
          *reinterpret_cast<__half2*>(x.dq + at) =
              __floats2half2_rn(acc_q[rb][ct][e], acc_q[rb][ct][e + 1]);
          *reinterpret_cast<__half2*>(x.dk + at) =
              __floats2half2_rn(acc_k[rb][ct][e], acc_k[rb][ct][e + 1]);
        } else if constexpr (sizeof(T) == 4) {
          *reinterpret_cast<float2*>(x.dq + at) =
              make_float2(acc_q[rb][ct][e], acc_q[rb][ct][e + 1]);
          *reinterpret_cast<float2*>(x.dk + at) =
              make_float2(acc_k[rb][ct][e], acc_k[rb][ct][e + 1]);
        } else {
          *reinterpret_cast<double2*>(x.dq + at) =
              make_double2(acc_q[rb][ct][e], acc_q[rb][ct][e + 1]);
          *reinterpret_cast<double2*>(x.dk + at) =
              make_double2(acc_k[rb][ct][e], acc_k[rb][ct][e + 1]);
        }
      }
  __syncthreads();

  // 7. dg_t = Σ_{r≥t} T_r + Σ_{r<t} P_r + e^{G[C−1]} ⊙ Y into T's tile (Xk: scratch).
  dg_sums<BK>([&](int r, int c) { return q_s[at_k(r, c)]; },
              [&](int r, int c) { return k_s[at_k(r, c)]; },
              [&](int r, int c, T v) { q_s[at_k(r, c)] = v; },
              [&](int c) { return exp_of<T>(G_s[at_G(kChunk - 1, c)]) * Y_s[c]; }, Xk);
  __syncthreads();
  for (int i = threadIdx.x; i < kChunk * BK / kIn; i += kThreads) {
    const int r = i / (BK / kIn), c = i % (BK / kIn) * kIn;
    if (t0 + r >= d.T || k0 + c >= d.K) continue;
    uint4* to = reinterpret_cast<uint4*>(x.dg + (head + (t0 + r) * d.H) * d.K + k0 + c);
    if constexpr (kHalf) {  // 8 floats, two swizzled vectors, into 8 halves
      const float4 a = *reinterpret_cast<const float4*>(q_s + at_k(r, c)),
                   b = *reinterpret_cast<const float4*>(q_s + at_k(r, c + 4));
      auto bits = [](__half2 h) { return *reinterpret_cast<const uint32_t*>(&h); };
      *to = make_uint4(bits(__floats2half2_rn(a.x, a.y)), bits(__floats2half2_rn(a.z, a.w)),
                       bits(__floats2half2_rn(b.x, b.y)), bits(__floats2half2_rn(b.z, b.w)));
    } else {
      *to = *reinterpret_cast<const uint4*>(q_s + at_k(r, c));
    }
  }
  if constexpr (kCluster > 1) tc::cluster_wait();  // the others have read this block's dA
}

}  // namespace glabench::chunked::fp_grads
