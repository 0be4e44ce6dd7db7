// Moving chunk slabs between global memory and shared memory, and carving a block's
// shared memory. Token tensors are [B,T,H,D] (the ABI's layout); a slab is the
// kChunk×cols window of one head (b, h) from token t0 and feature d0. Tokens past T and
// features past D read as zero — the ragged last chunk and padded heads then add
// nothing: a zero key adds nothing to the state, a zero gate decays nothing. The
// kernels' own intermediates in the workspace are per head and padded: [B·H][rows][ld].
#pragma once

#include <cstddef>
#include <cstdint>

#include "chunk_traits.cuh"

namespace glabench::chunked {

// The sizes every kernel sees, with the padded ones the workspace uses.
struct dims {
  int B, H, K, V;
  int64_t T;
  int NT;      // chunks
  int Kp, Vp;  // K and V rounded up to the slab widths
  int NVs;     // Vp / BV: the V slabs of the state kernels
};

// One head of a [B,T,H,D] tensor.
template <class T>
struct head_tensor {
  T* base;  // element (b, 0, h, 0)
  int64_t T_len;
  int64_t row_stride;  // H·D
  int D;
  __device__ head_tensor(T* p, const dims& d, int D_, int bh)
      : base(p ? p + (static_cast<int64_t>(bh / d.H) * d.T * d.H + bh % d.H) * D_ : nullptr),
        T_len(d.T),
        row_stride(static_cast<int64_t>(d.H) * D_),
        D(D_) {}
};

// dst[r][c] = convert(src[t0 + r][d0 + c]) for r < rows, c < cols; zero outside the
// tensor.
template <class Dst, class Src, class Convert>
__device__ void load_slab(Dst* dst, int ld, const head_tensor<const Src>& src, int64_t t0, int d0,
                          int rows, int cols, Convert convert) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    const int64_t t = t0 + r;
    const int d = d0 + c;
    Dst x = convert(Src(0));
    if (t < src.T_len && d < src.D) x = convert(src.base[t * src.row_stride + d]);
    dst[r * ld + c] = x;
  }
}

// dst[t0 + r][d0 + c] = convert(src[r][c]) inside the tensor.
template <class Dst, class Src, class Convert>
__device__ void store_slab(const head_tensor<Dst>& dst, int64_t t0, int d0, const Src* src, int ld,
                           int rows, int cols, Convert convert) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    const int64_t t = t0 + r;
    const int d = d0 + c;
    if (t < dst.T_len && d < dst.D) dst.base[t * dst.row_stride + d] = convert(src[r * ld + c]);
  }
}

// A rows×cols window of a dense row-major matrix (row length `stride`) in global memory,
// copied to or from shared memory.
template <class Dst, class Src, class Convert>
__device__ void load_tile(Dst* dst, int ld, const Src* src, int64_t stride, int rows, int cols,
                          Convert convert) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    dst[r * ld + c] = convert(src[r * stride + c]);
  }
}
template <class Dst, class Src, class Convert>
__device__ void store_tile(Dst* dst, int64_t stride, const Src* src, int ld, int rows, int cols,
                           Convert convert) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    dst[r * stride + c] = convert(src[r * ld + c]);
  }
}

// A state tile of a [B·H][slots][Kp][Vp] workspace array: rows k0.., columns v0...
template <class T>
__host__ __device__ inline T* state_tile(T* base, const dims& d, int bh, int slot, int k0, int v0) {
  const int slots = d.NT + 1;
  return base + ((static_cast<int64_t>(bh) * slots + slot) * d.Kp + k0) * d.Vp + v0;
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

// Shared-memory carving, the same on host (sizes, from a null base) and device: every
// array starts on a 128-byte boundary.
struct carve {
  uintptr_t base;
  size_t used = 0;
  template <class T>
  __host__ __device__ T* take(size_t count) {
    T* p = reinterpret_cast<T*>(base + used);
    used += (count * sizeof(T) + 127) / 128 * 128;
    return p;
  }
};

}  // namespace glabench::chunked
