// Building blocks shared by the kernels, ThunderKittens-style: the storage ↔ compute
// conversions and exp, the lane-group reductions, the tile geometry, the workspace
// layout and the chunk loop.
//
// Geometry. A thread owns a *strip* of L consecutive elements along the axis its
// kernel reduces over (K for the column kernels, V for the row kernel), for several
// owned indices along the other axis. NL consecutive lanes (a power of two ≤ 16) own
// the strips of one index set, so NL·L ≥ the reduced head size, and a reduction over
// the head is L in-register FMAs plus log2(NL) shuffles. Elements of the last strip
// past the head size are masked to zero when staged.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace glabench::parallel_scan {

template <typename T>
struct compute_of {
  using type = float;  // fp32 state and accumulation for fp32, bf16 and fp16
};
template <>
struct compute_of<double> {
  using type = double;
};
template <typename T>
using compute_t = typename compute_of<T>::type;

template <typename C>
__device__ __forceinline__ C to_compute(double x) {
  return static_cast<C>(x);
}
template <typename C>
__device__ __forceinline__ C to_compute(float x) {
  return static_cast<C>(x);
}
template <typename C>
__device__ __forceinline__ C to_compute(__nv_bfloat16 x) {
  return static_cast<C>(__bfloat162float(x));
}
template <typename C>
__device__ __forceinline__ C to_compute(__half x) {
  return static_cast<C>(__half2float(x));
}

// keep ? x : 0 in the compute type, for the column stager's bf16 values. The
// conversion is a 16-bit shift (exact): plain integer code, which the compiler may
// compute before the select. __bfloat162float is inline asm, which it will not, so each
// masked conversion became a branch: 22 divergence regions in the wide bf16 forward,
// none in fp32. With the shift the bf16 forward and dv are 2–14% faster (H200). The row
// stager keeps `keep ? to_compute(x) : 0`: there the shift pushed the narrow width-4 row
// kernel to 88 bytes of spills (B4 T4096 H64 D128 bf16 forward+backward 7% slower).
template <typename C>
__device__ __forceinline__ C widen_bf16(__nv_bfloat16 x) {
  return static_cast<C>(__uint_as_float(uint32_t(__bfloat16_as_ushort(x)) << 16));
}
template <typename C>
__device__ __forceinline__ C masked_bf16(bool keep, __nv_bfloat16 x) {
  const C value = widen_bf16<C>(x);
  return keep ? value : C(0);
}

template <typename T, typename C>
__device__ __forceinline__ T to_storage(C x) {
  return static_cast<T>(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 to_storage<__nv_bfloat16, float>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half to_storage<__half, float>(float x) {
  return __float2half_rn(x);
}

template <typename C>
__device__ __forceinline__ C exp_of(C x) {
  return exp(x);
}
// e^x as 2^(x·log2 e) on the special-function unit (what __expf does), flushing
// results under 2^-126 to zero: two instructions instead of __expf's five, which also
// guard the subnormal range. Decays that small are zero next to any state entry.
template <>
__device__ __forceinline__ float exp_of<float>(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
}

// e^{x} and e^{−x} together in fp64, for the fp64 state of fp32 storage: x = n·ln 2 + r
// with |r| ≤ ln 2 / 2 (Cody–Waite), e^{±r} = E(r²) ± r·O(r²) from the degree-8 Taylor
// polynomial (relative error under 3e-10, far below fp32's 6e-8), scaled by 2^{±n}.
// About 14 fp64 operations for the pair against some 40 for two calls of exp(). x is
// clamped to ±700 (e^{−700} ≈ 1e-304: zero next to any state entry).
__device__ __forceinline__ void exp_pair(double x, double& up, double& down) {
  constexpr double kShift = 6755399441055744.0;  // 1.5·2^52: t's low word holds round(x·log2 e)
  x = fmin(fmax(x, -700.0), 700.0);
  const double t = fma(x, 1.4426950408889634, kShift), n = t - kShift;
  const int ni = __double2loint(t);
  const double r0 =
      fma(n, -6.93147180369123816490e-01, x);  // ln 2's high part: n times it is exact
  const double r = fma(n, -1.90821492927058770002e-10, r0), r2 = r * r;
  double even = fma(r2, 1.0 / 40320, 1.0 / 720);
  even = fma(even, r2, 1.0 / 24);
  even = fma(even, r2, 0.5);
  even = fma(even, r2, 1.0);
  double odd = fma(r2, 1.0 / 5040, 1.0 / 120);
  odd = fma(odd, r2, 1.0 / 6);
  odd = fma(odd, r2, 1.0) * r;
  up = (even + odd) * __hiloint2double((1023 + ni) << 20, 0);
  down = (even - odd) * __hiloint2double((1023 - ni) << 20, 0);
}

// Sum over the NL consecutive lanes of a group; every lane gets the total.
template <int NL, typename C>
__device__ __forceinline__ C group_sum(C x) {
#pragma unroll
  for (int offset = NL / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// Sums N per-lane values over the NL lanes of a group by halving (reduce-scatter):
// at each step a lane keeps half of its values and adds its partner's copy of them, so
// the whole reduction costs N − N/NL shuffles instead of N·log2(NL). Afterwards lane l
// holds the sums of values l·N/NL … (l+1)·N/NL − 1 (N ≥ NL), or of value l/(NL/N) in
// every lane of a run of NL/N (N < NL: the last steps are plain butterflies). Then
// write(n, sum) is called once per value n, by one lane.
template <int NL, int OFF, int COUNT, int N, typename C>
__device__ __forceinline__ void reduce_scatter_step(C (&x)[N], int lane) {
  if constexpr (OFF > 0) {
    if constexpr (COUNT > 1) {
      constexpr int half = COUNT / 2;
      const bool upper = lane & OFF;
#pragma unroll
      for (int m = 0; m < half; ++m) {
        const C send = upper ? x[m] : x[m + half], keep = upper ? x[m + half] : x[m];
        x[m] = keep + __shfl_xor_sync(0xffffffffu, send, OFF);
      }
      reduce_scatter_step<NL, OFF / 2, half>(x, lane);
    } else {
      x[0] += __shfl_xor_sync(0xffffffffu, x[0], OFF);
      reduce_scatter_step<NL, OFF / 2, 1>(x, lane);
    }
  }
}

template <int NL, int N, typename C, typename Write>
__device__ __forceinline__ void reduce_scatter(C (&x)[N], int lane, Write&& write) {
  static_assert((N & (N - 1)) == 0 && (NL & (NL - 1)) == 0, "powers of two");
  reduce_scatter_step<NL, NL / 2, N>(x, lane);
  if constexpr (N >= NL) {
#pragma unroll
    for (int m = 0; m < N / NL; ++m) write(lane * (N / NL) + m, x[m]);
  } else if (lane % (NL / N) == 0) {
    write(lane / (NL / N), x[0]);
  }
}

// L consecutive values of a strip from 16-byte-aligned shared memory, as 16-byte
// vector loads (a quarter of the load instructions of scalar loads).
template <int L, typename C>
__device__ __forceinline__ void load_strip(const C* src, C (&dst)[L]) {
  if constexpr (std::is_same_v<C, float> && L % 4 == 0) {
#pragma unroll
    for (int m = 0; m < L / 4; ++m) {
      const float4 x = reinterpret_cast<const float4*>(src)[m];
      dst[4 * m] = x.x, dst[4 * m + 1] = x.y, dst[4 * m + 2] = x.z, dst[4 * m + 3] = x.w;
    }
  } else if constexpr (std::is_same_v<C, double> && L % 2 == 0) {
#pragma unroll
    for (int m = 0; m < L / 2; ++m) {
      const double2 x = reinterpret_cast<const double2*>(src)[m];
      dst[2 * m] = x.x, dst[2 * m + 1] = x.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < L; ++e) dst[e] = src[e];
  }
}

// Strip geometry along the reduced axis, and its shared-memory layout: strip s sits
// at s·kStride, padded by 16 bytes so the NL lanes' vector loads hit distinct banks.
template <typename C, int NL, int L>
struct strip_layout {
  static constexpr int kPadded = NL * L;                   // reduced axis, padded
  static constexpr int kStride = L + 16 / int(sizeof(C));  // floats (or doubles) per strip in smem
  static constexpr int kRow = NL * kStride;                // one token's vector in smem
  __device__ static constexpr int slot(int index) { return (index / L) * kStride + index % L; }
};

// One sequence of the batch: its first token's row among the batch's tokens and its
// length. Sequence b of B equal ones starts at b·T; a packed batch's at cu_seqlens[b].
struct sequence_span {
  int64_t bos, T;
};
template <typename Args>
__device__ __forceinline__ sequence_span sequence_of(const Args& a, int64_t b) {
  if (!a.cu_seqlens) return {b * a.T, a.T};
  const int64_t bos = a.cu_seqlens[b];
  return {bos, a.cu_seqlens[b + 1] - bos};
}

// Whether token row t (of the batch's tokens) is the first of its sequence: a binary
// search of a packed batch's offsets.
template <typename Args>
__device__ __forceinline__ bool starts_sequence(const Args& a, int64_t t) {
  if (!a.cu_seqlens) return t % a.T == 0;
  int64_t lo = 0, hi = a.B;  // cu_seqlens[lo] ≤ t < cu_seqlens[hi]
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (a.cu_seqlens[mid] <= t ? lo : hi) = mid;
  }
  return a.cu_seqlens[lo] == t;
}

// Where a thread sits: its lane within its group of NL lanes, the group, the (b, h) its
// block works on and b's sequence; state0 is element (b, h, 0, 0) of a [B,H,K,V] state.
template <int NL>
struct thread_place {
  int lane, group;
  int64_t b, h, state0;
  sequence_span seq;
  template <typename Args>
  __device__ explicit thread_place(const Args& a)
      : lane(threadIdx.x % NL),
        group(threadIdx.x / NL),
        b(blockIdx.y / a.H),
        h(blockIdx.y % a.H),
        state0(int64_t(blockIdx.y) * a.K * a.V),
        seq(sequence_of(a, blockIdx.y / a.H)) {}
};

// The kernels' two staging buffers in dynamic shared memory, addressed
// arithmetically: an array of the two pointers would live in local memory and hide
// from the compiler that these are shared-memory accesses (generic LD/ST in the SASS).
template <typename C, int kBufferValues>
struct double_buffer {
  using value_type = C;
  C* base;
  __device__ double_buffer() {
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    base = reinterpret_cast<C*>(smem_bytes);
  }
  __device__ C* operator()(int64_t n) const { return base + (n & 1) * kBufferValues; }
};

// Element (i, j) of a [B,H,K,V] state (h0, dht) of element type S starting at state0,
// in the compute type: zero where the tensor is absent or (i, j) lies past K or V.
template <typename C, typename S, typename Args>
__device__ __forceinline__ C state_value(const S* src, const Args& a, int64_t state0, int64_t i,
                                         int64_t j) {
  return src && i < a.K && j < a.V ? to_compute<C>(src[state0 + i * a.V + j]) : C(0);
}
// Runs read(static_cast<const S*>(src)) with S the states' element type: Elem, or fp32
// where a.state_fp32. One branch around a whole tile's loads, not one per element.
template <typename Elem, typename Args, typename Read>
__device__ __forceinline__ void with_state_type(const void* src, const Args& a, Read&& read) {
  if (a.state_fp32)
    read(static_cast<const float*>(src));
  else
    read(static_cast<const Elem*>(src));
}
// Stores x as element `at` of a state (ht, dh0): Elem, or fp32 where a.state_fp32.
template <typename Elem, typename C, typename Args>
__device__ __forceinline__ void store_state_value(void* dst, const Args& a, int64_t at, C x) {
  if (a.state_fp32)
    static_cast<float*>(dst)[at] = float(x);
  else
    static_cast<Elem*>(dst)[at] = to_storage<Elem>(x);
}

// The backward's workspace (scan_args.hpp), by the batch's token rows: the hist part of
// ∂L/∂b [tokens,H,K], then v_t·do_t [tokens,H]; rwkv6 adds v_{t−1}·do_t [tokens,H] and
// du per sequence [B,H,K].
template <typename C, typename Args>
__device__ C* partial_db(const Args& a) {
  return static_cast<C*>(a.workspace);
}
template <typename C, typename Args>
__device__ C* token_dots(const Args& a) {
  return static_cast<C*>(a.workspace) + batch_tokens(a) * a.H * a.K;
}
template <typename C, typename Args>
__device__ C* cross_dots(const Args& a) {
  return token_dots<C>(a) + batch_tokens(a) * a.H;
}
template <typename C, typename Args>
__device__ C* du_partials(const Args& a) {
  return cross_dots<C>(a) + batch_tokens(a) * a.H;
}

// Runs walk(std::true_type) for a chunk taken step by step, walk(std::false_type) for
// a rescaled one: each form is its own unrolled loop, so the choice is one branch.
template <typename Walk>
__device__ __forceinline__ void walk_chunk(bool step_by_step, Walk&& walk) {
  if (step_by_step)
    walk(std::true_type{});
  else
    walk(std::false_type{});
}

// The chunk loop every kernel runs: body(n, buf) for steps n = 0 … chunks − 1 over the
// two staging buffers. load(p, n) fills p with step n's chunk, commit(p, buf) writes it
// to a buffer; both are the kernel's stage's, mapped to its walking direction. A
// chunk's loads are issued right after the previous one is committed, so they fly
// during a whole chunk's compute (keeping two or three chunks in flight was measured
// slower: the registers cost more than the latency hidden). One barrier a chunk:
// after it, the buffer just committed is complete and the other one is free.
//
// STAGGER: the first half of the block's warps stage chunk n + 1 before computing chunk
// n, the second half after. Either order is safe, as body(n) reads the other buffer.
// Warps w and w + 4 share a scheduler, so while one of them stages and reduces (integer,
// shuffle and select work) the other keeps the FMA pipe busy, where in lockstep both
// would leave it idle at the same time. Taken by the fp64-state forward, whose fp64
// pipe is the bottleneck.
template <typename Prefetch, bool STAGGER = false, typename Buffer, typename Load, typename Commit,
          typename Body>
__device__ __forceinline__ void pipelined_chunks(int64_t chunks, const Buffer& buffer, Load&& load,
                                                 Commit&& commit, Body&& body) {
  Prefetch next;
  load(next, 0);
  commit(next, buffer(0));
  if (chunks > 1) load(next, 1);
  __syncthreads();
  if constexpr (STAGGER) {
    auto stage_ahead = [&](int64_t n) {
      if (n + 1 < chunks) commit(next, buffer(n + 1));
      if (n + 2 < chunks) load(next, n + 2);
    };
    const bool early = threadIdx.x < blockDim.x / 2;  // whole warps
    for (int64_t n = 0; n < chunks; ++n) {
      if (early) stage_ahead(n);
      body(n, static_cast<const typename Buffer::value_type*>(buffer(n)));
      if (!early) stage_ahead(n);
      __syncthreads();
    }
  } else {
    for (int64_t n = 0; n < chunks; ++n) {
      body(n, static_cast<const typename Buffer::value_type*>(buffer(n)));
      if (n + 1 < chunks) commit(next, buffer(n + 1));
      if (n + 2 < chunks) load(next, n + 2);
      __syncthreads();
    }
  }
}

}  // namespace glabench::parallel_scan
