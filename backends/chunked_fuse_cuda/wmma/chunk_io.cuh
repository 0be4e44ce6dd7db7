// The WMMA kernels' memory: moving chunk slabs between global memory and shared memory,
// and carving a block's shared memory. Token tensors are [B,T,H,D] (the ABI's layout); a
// slab is the kChunk×cols window of one head (b, h) from token t0 and feature d0. Tokens
// past T and features past D read as zero — the ragged last chunk and padded heads then
// add nothing: a zero key adds nothing to the state, a zero gate decays nothing. The
// kernels' own intermediates in the workspace are per head and padded: [B·H][rows][ld].
#pragma once

#include <cstddef>
#include <cstdint>

#include "../tensor_layout.cuh"
#include "traits.cuh"

namespace glabench::chunked {

// The sizes every kernel sees, with the padded ones the workspace uses.
struct dims {
  int B, H, K, V;
  int64_t T;
  int NT;      // chunks
  int Kp, Vp;  // K and V rounded up to the slab widths
  int NVs;     // Vp / BV: the V slabs of the state kernels
};

// The pointers a forward or backward launch passes (device memory; optional ones null).
// The states (h0, dht, ht, dh0) are in S, or in fp32 where state_f32 (bf16 storage with
// fp32 states); their pointers then hold floats.
template <class S>
struct tensors {
  const S *q, *k, *v, *g, *h0, *d_o, *dht;
  S *o, *ht, *dq, *dk, *dv, *dg, *dh0;
  bool state_f32;
};

// One head of a [B,T,H,D] tensor.
template <class T>
struct head_tensor {
  T* base;  // element (b, 0, h, 0)
  int64_t T_len;
  int64_t row_stride;  // H·D
  int D;
  __device__ head_tensor(T* p, const dims& d, int D_, int bh)
      : base(p ? p + head_row(bh, d.H, d.T) * D_ : nullptr),
        T_len(d.T),
        row_stride(static_cast<int64_t>(d.H) * D_),
        D(D_) {}
};

// Hands f(r, c, x) every element of the 16-byte vectors a thread loaded (buf[it] holding
// vector threadIdx.x + it·kThreads of a ROWS×COLS window, kPerRow vectors a row).
template <int ROWS, int COLS, class Src, class F>
__device__ __forceinline__ void unpack_vectors(const uint4* buf, F f) {
  constexpr int kVec = 16 / sizeof(Src), kPerRow = COLS / kVec, kVecs = ROWS * kPerRow;
  constexpr int kIter = (kVecs + kThreads - 1) / kThreads;
#pragma unroll
  for (int it = 0; it < kIter; ++it) {
    const int idx = threadIdx.x + it * kThreads, r = idx / kPerRow, c = idx % kPerRow * kVec;
    if (idx < kVecs) {
      const Src* e = reinterpret_cast<const Src*>(&buf[it]);
#pragma unroll
      for (int v = 0; v < kVec; ++v) f(r, c + v, e[v]);
    }
  }
}

// The loads of a ROWS×COLS window of rows t0… and columns d0… (zero outside the
// tensor), issued by issue() and handed to f(r, c, x) by commit(): every load of a
// thread is in flight before it uses any, 16 bytes a load where the rows allow it (D a
// multiple of the vector, aligned base), so a slab costs one memory latency, and a
// caller may issue the next chunk's loads before computing on this one. Elsewhere
// commit() loads element by element, the same way.
template <int ROWS, int COLS, class Src>
struct slab_loads {
  static constexpr int kVec = 16 / sizeof(Src);
  static constexpr int kPerRow = COLS / kVec, kVecs = ROWS * kPerRow;
  static constexpr int kIter = (kVecs + kThreads - 1) / kThreads;
  static_assert(COLS % kVec == 0, "slab columns are whole vectors");
  uint4 buf[kIter];
  bool vectors = false;

  __device__ void issue(const head_tensor<const Src>& src, int64_t t0, int d0) {
    vectors = src.base && src.D % kVec == 0 && d0 % kVec == 0 &&
              reinterpret_cast<uintptr_t>(src.base) % 16 == 0;
    if (!vectors) return;
#pragma unroll
    for (int it = 0; it < kIter; ++it) {
      const int idx = threadIdx.x + it * kThreads, r = idx / kPerRow, d = d0 + idx % kPerRow * kVec;
      buf[it] = make_uint4(0, 0, 0, 0);
      if (idx < kVecs && t0 + r < src.T_len && d < src.D)
        buf[it] = __ldg(reinterpret_cast<const uint4*>(src.base + (t0 + r) * src.row_stride + d));
    }
  }

  template <class F>
  __device__ void commit(const head_tensor<const Src>& src, int64_t t0, int d0, F f) {
    if (vectors) {
      unpack_vectors<ROWS, COLS, Src>(buf, f);
      return;
    }
    constexpr int kScalars = (ROWS * COLS + kThreads - 1) / kThreads;
    Src x[kScalars];
#pragma unroll
    for (int it = 0; it < kScalars; ++it) {
      const int idx = threadIdx.x + it * kThreads, r = idx / COLS, d = d0 + idx % COLS;
      x[it] = Src(0);
      if (idx < ROWS * COLS && src.base && t0 + r < src.T_len && d < src.D)
        x[it] = src.base[(t0 + r) * src.row_stride + d];
    }
#pragma unroll
    for (int it = 0; it < kScalars; ++it) {
      const int idx = threadIdx.x + it * kThreads;
      if (idx < ROWS * COLS) f(idx / COLS, idx % COLS, x[it]);
    }
  }
};

template <int ROWS, int COLS, class Src, class F>
__device__ __forceinline__ void visit_slab(const head_tensor<const Src>& src, int64_t t0, int d0,
                                           F f) {
  slab_loads<ROWS, COLS, Src> loads;
  loads.issue(src, t0, d0);
  loads.commit(src, t0, d0, f);
}

// dst[r][c] = convert(src[t0 + r][d0 + c]); zero outside the tensor.
template <int ROWS, int COLS, class Dst, class Src, class Convert>
__device__ void load_slab(Dst* dst, int ld, const head_tensor<const Src>& src, int64_t t0, int d0,
                          Convert convert) {
  visit_slab<ROWS, COLS>(src, t0, d0, [&](int r, int c, Src x) { dst[r * ld + c] = convert(x); });
}

// dst[t0 + r][d0 + c] = convert(src[r][c]) inside the tensor: fp32 and fp64 16 bytes a
// store where the rows allow it (D a multiple of the vector, aligned base), else element
// by element. bf16 stays element by element everywhere: its dq/dk/dg slabs are stored
// inside the gradient walk, whose registers are full, and vector stores there cost its
// mild fwd+bwd 0.3 % (H200); the other bf16 WMMA kernels are fallbacks, not measured.
template <int ROWS, int COLS, class Dst, class Src, class Convert>
__device__ void store_slab(const head_tensor<Dst>& dst, int64_t t0, int d0, const Src* src, int ld,
                           Convert convert) {
  constexpr int kVec = 16 / sizeof(Dst), kPerRow = COLS / kVec;
  if (sizeof(Dst) >= 4 && COLS % kVec == 0 && dst.D % kVec == 0 && d0 % kVec == 0 &&
      reinterpret_cast<uintptr_t>(dst.base) % 16 == 0) {
    for (int i = threadIdx.x; i < ROWS * kPerRow; i += kThreads) {
      const int r = i / kPerRow, c = i % kPerRow * kVec;
      const int64_t t = t0 + r;
      if (t >= dst.T_len || d0 + c >= dst.D) continue;
      alignas(16) Dst v[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) v[e] = convert(src[r * ld + c + e]);
      *reinterpret_cast<uint4*>(dst.base + t * dst.row_stride + d0 + c) =
          *reinterpret_cast<const uint4*>(v);
    }
    return;
  }
  for (int i = threadIdx.x; i < ROWS * COLS; i += kThreads) {
    const int r = i / COLS, c = i % COLS;
    const int64_t t = t0 + r;
    const int d = d0 + c;
    if (t < dst.T_len && d < dst.D) dst.base[t * dst.row_stride + d] = convert(src[r * ld + c]);
  }
}

// A ROWS×COLS window of a dense row-major matrix in global memory (row length `stride`,
// the workspace's padded arrays: aligned, whole vectors): issue() starts its loads,
// commit() hands f(r, c, x) every element, as slab_loads does for token slabs.
template <int ROWS, int COLS, class Src>
struct tile_loads {
  static constexpr int kVec = 16 / sizeof(Src);
  static_assert(COLS % kVec == 0, "tile columns are whole vectors");
  static constexpr int kPerRow = COLS / kVec, kVecs = ROWS * kPerRow;
  static constexpr int kIter = (kVecs + kThreads - 1) / kThreads;
  uint4 buf[kIter];

  __device__ void issue(const Src* src, int64_t stride) {
#pragma unroll
    for (int it = 0; it < kIter; ++it) {
      const int idx = threadIdx.x + it * kThreads;
      if (idx < kVecs)
        buf[it] =
            *reinterpret_cast<const uint4*>(src + (idx / kPerRow) * stride + idx % kPerRow * kVec);
    }
  }
  template <class F>
  __device__ void commit(F f) const {
    unpack_vectors<ROWS, COLS, Src>(buf, f);
  }
};

// Each element of a tile handed to f(r, c, x), loads first.
template <int ROWS, int COLS, class Src, class F>
__device__ void visit_tile(const Src* src, int64_t stride, F f) {
  tile_loads<ROWS, COLS, Src> loads;
  loads.issue(src, stride);
  loads.commit(f);
}
template <int ROWS, int COLS, class Dst, class Src, class Convert>
__device__ void load_tile(Dst* dst, int ld, const Src* src, int64_t stride, Convert convert) {
  visit_tile<ROWS, COLS>(src, stride, [&](int r, int c, Src x) { dst[r * ld + c] = convert(x); });
}
template <int ROWS, int COLS, class Dst, class Src, class Convert>
__device__ void store_tile(Dst* dst, int64_t stride, const Src* src, int ld, Convert convert) {
  for (int i = threadIdx.x; i < ROWS * COLS; i += kThreads) {
    const int r = i / COLS, c = i % COLS;
    dst[r * stride + c] = convert(src[r * ld + c]);
  }
}

// A state tile of a [B·H][slots][Kp][Vp] workspace array: rows k0.., columns v0...
template <class T>
__host__ __device__ inline T* state_tile(T* base, const dims& d, int bh, int slot, int k0, int v0) {
  const int slots = d.NT + 1;
  return base + ((static_cast<int64_t>(bh) * slots + slot) * d.Kp + k0) * d.Vp + v0;
}

// A rows×COLS tile (rows k0…, columns v0…) of head bh's K×V state as the ABI passes it
// ([B·H][K][V]: h0, dht), in the accumulator type; zero outside the state or when absent.
template <int COLS, class Acc, class S>
__device__ void load_abi_state_as(Acc* dst, int ld, const S* states, const dims& d, int bh, int k0,
                                  int v0, int rows) {
  const S* head = states ? states + static_cast<int64_t>(bh) * d.K * d.V : nullptr;
  for (int i = threadIdx.x; i < rows * COLS; i += kThreads) {
    const int r = i / COLS, c = i % COLS, kk = k0 + r, vv = v0 + c;
    dst[r * ld + c] = head && kk < d.K && vv < d.V
                          ? static_cast<Acc>(to_acc_f(head[static_cast<int64_t>(kk) * d.V + vv]))
                          : Acc(0);
  }
}

// The same tile back into an ABI state (ht, dh0), inside the state; nothing when absent.
template <int COLS, class Acc, class S>
__device__ void store_abi_state_as(S* states, const dims& d, int bh, int k0, int v0, const Acc* src,
                                   int ld, int rows) {
  if (!states) return;
  S* head = states + static_cast<int64_t>(bh) * d.K * d.V;
  for (int i = threadIdx.x; i < rows * COLS; i += kThreads) {
    const int r = i / COLS, c = i % COLS, kk = k0 + r, vv = v0 + c;
    if (kk < d.K && vv < d.V) head[static_cast<int64_t>(kk) * d.V + vv] = to_op<S>(src[r * ld + c]);
  }
}

// The two above for a state in S, or in fp32 where `f32` (bf16 storage only; the pointer
// then holds floats).
template <int COLS, class Acc, class S>
__device__ void load_abi_state(Acc* dst, int ld, const S* states, bool f32, const dims& d, int bh,
                               int k0, int v0, int rows) {
  if constexpr (sizeof(S) == 2)
    if (f32)
      return load_abi_state_as<COLS>(dst, ld, reinterpret_cast<const float*>(states), d, bh, k0, v0,
                                     rows);
  load_abi_state_as<COLS>(dst, ld, states, d, bh, k0, v0, rows);
}
template <int COLS, class Acc, class S>
__device__ void store_abi_state(S* states, bool f32, const dims& d, int bh, int k0, int v0,
                                const Acc* src, int ld, int rows) {
  if constexpr (sizeof(S) == 2)
    if (f32)
      return store_abi_state_as<COLS>(reinterpret_cast<float*>(states), d, bh, k0, v0, src, ld,
                                      rows);
  store_abi_state_as<COLS>(states, d, bh, k0, v0, src, ld, rows);
}

// A gate slab: G[r][c] = g (the cumulative sum comes later, stage 1) and E[r][c] = e^g,
// the token's own decay (≤ 1), from which the diagonal sub-chunk blocks build their
// decays as running products.
template <class Tr, class Src>
__device__ void load_gates(typename Tr::gate_t* G, typename Tr::acc_t* E, int ld,
                           const head_tensor<const Src>& src, int64_t t0, int d0) {
  visit_slab<kChunk, Tr::BK>(src, t0, d0, [&](int r, int c, Src x) {
    const typename Tr::acc_t g = to_acc_f(x);
    G[r * ld + c] = static_cast<typename Tr::gate_t>(g);
    E[r * ld + c] = Tr::exp(g);
  });
}

struct convert_to_acc {
  template <class S>
  __device__ auto operator()(S x) const {
    return to_acc_f(x);
  }
};
template <class T>
struct convert_to {
  template <class S>
  __device__ T operator()(S x) const {
    return to_op<T>(to_acc_f(x));
  }
};

// Shared-memory carving, the same on host (sizes only) and device: every array starts
// on a 128-byte boundary. Device pointers stay derived from the __shared__ array itself,
// so the compiler knows their address space (shared loads, ldmatrix for WMMA) — a
// round trip through an integer would leave it generic loads.
struct carve {
  unsigned char* base;
  size_t used = 0;
  template <class T>
  __host__ __device__ T* take(size_t count) {
#ifdef __CUDA_ARCH__
    T* p = reinterpret_cast<T*>(base + used);
#else
    T* p = nullptr;
#endif
    used += (count * sizeof(T) + 127) / 128 * 128;
    return p;
  }
};

}  // namespace glabench::chunked
