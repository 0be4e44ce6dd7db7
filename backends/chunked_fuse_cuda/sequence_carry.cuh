// The small kernels of sequence parallelism (launch.hpp, sequence_parallel.hpp): a rank's
// contribution folded from its first passes' pieces or summed from its gates, the state
// carried to a rank across the others' contributions, and a state from the accumulator
// type into the problem's state dtype. One thread an element; every exponent a sum of
// log2 gates ≤ 0, as in the walks.
#pragma once

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

#include "wmma/traits.cuh"  // to_acc_f: a stored value as its accumulator type

namespace glabench::chunked::sequence {

// Where a contribution's parts lie ([L: heads·K·V][D: heads·K·V][G: heads·K]).
struct contribution_parts {
  int heads, K, V;
  __host__ __device__ size_t state_elems() const { return static_cast<size_t>(heads) * K * V; }
  __host__ __device__ size_t elems() const {
    return 2 * state_elems() + static_cast<size_t>(heads) * K;
  }
  __host__ __device__ size_t L() const { return 0; }
  __host__ __device__ size_t D() const { return state_elems(); }
  __host__ __device__ size_t G() const { return 2 * state_elems(); }
};

__device__ __forceinline__ float exp2_of(float x) {
  return exp2f(x);
}
__device__ __forceinline__ double exp2_of(double x) {
  return exp2(x);
}

// The bf16 walks' first-pass pieces ([piece][heads][slabs][KP][BV] fp32 states and
// [piece][heads][KP] log2 gate sums) folded in order — S ← 2^{dgate}·S + dstate, piece 0
// first, or the last first where `backward` (the dS pieces) — into a [heads][K][V] state
// at `out`; and, where `gates` is not null, the gate sums into gates [heads][K].
template <int KP, int BV>
__global__ void fold_pieces_kernel(const float* dstate, const float* dgate, int pieces, int heads,
                                   int slabs, int K, int V, bool backward, float* out,
                                   float* gates) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(heads) * K * V) return;
  const int v = static_cast<int>(i % V), k = static_cast<int>(i / V % K);
  const int bh = static_cast<int>(i / (static_cast<int64_t>(K) * V));
  const int slab = v / BV, col = v % BV;
  float S = 0.f, G = 0.f;
  for (int n = 0; n < pieces; ++n) {
    const int m = backward ? pieces - 1 - n : n;
    const float g = dgate[(static_cast<int64_t>(m) * heads + bh) * KP + k];
    const float x =
        dstate[((static_cast<int64_t>(m) * heads + bh) * slabs + slab) * KP * BV + k * BV + col];
    S = fmaf(exp2f(g), S, x);
    G += g;
  }
  out[i] = S;
  if (gates && v == 0) gates[static_cast<int64_t>(bh) * K + k] = G;
}

// G [heads][K] = Σ_t g_t·log2 e over a [B,T,H,K] gate tensor, summed in Acc.
template <class Acc, class S>
__global__ void gate_sum_kernel(const S* g, int B, int64_t T, int H, int K, Acc* gates) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(B) * H * K) return;
  const int k = static_cast<int>(i % K), bh = static_cast<int>(i / K), b = bh / H, h = bh % H;
  const S* p = g + (static_cast<int64_t>(b) * T * H + h) * K + k;
  Acc sum = 0;
  for (int64_t t = 0; t < T; ++t) sum += static_cast<Acc>(to_acc_f(p[t * H * K]));
  gates[i] = sum * static_cast<Acc>(1.4426950408889634);
}

// The state carried to rank r (launch.hpp's launch_carry), from `given` of type Given.
template <class Acc, class Given>
__global__ void carry_kernel(const Acc* gathered, contribution_parts parts, int W, int r,
                             bool backward, const Given* given, Acc* out) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(parts.state_elems())) return;
  const int64_t row = i / parts.V;  // (head, k)
  Acc S = given ? static_cast<Acc>(to_acc_f(given[i])) : Acc(0);
  auto across = [&](int q, size_t part) {
    const Acc* c = gathered + static_cast<size_t>(q) * parts.elems();
    S = exp2_of(c[parts.G() + row]) * S + c[part + i];
  };
  if (backward)
    for (int q = W - 1; q > r; --q) across(q, parts.D());
  else
    for (int q = 0; q < r; ++q) across(q, parts.L());
  out[i] = S;
}

template <class Acc, class Out>
__global__ void state_from_acc_kernel(const Acc* acc, size_t count, Out* out) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  if constexpr (sizeof(Out) == 2)
    out[i] = __float2bfloat16_rn(static_cast<float>(acc[i]));
  else
    out[i] = static_cast<Out>(acc[i]);
}

}  // namespace glabench::chunked::sequence
