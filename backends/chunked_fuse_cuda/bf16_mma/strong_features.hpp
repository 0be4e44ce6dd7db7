// Strong features: a 16-token sub-chunk whose log2 gates in one key feature sum below
// −kSafeLog2. Their k̄ = k·2^{−l} would pass |k|·2^96 on the tensor cores, so the bf16 walks
// take them apart: the forward sums its diagonal block pair by pair
// (walk_inner_chunk_strong_gates), the gradient walk zeroes its k̄ and writes their columns'
// dq, dk and dg again pair by pair (rewrite_strong_features). Only a chunk with a gate above
// 0 or not finite leaves the walk for the WMMA bodies (walk_grads_listing). Plain C++
// besides the kernels: the CPU test tests/strong_features_test.cpp checks the listing.
#pragma once

#include <cmath>

#include "../walk_plan.hpp"

namespace glabench::chunked::walk {

// A feature whose gates over a sub-chunk sum below −kSafeLog2 (log2) has its diagonal
// block summed pair by pair: the keys' 2^{−l} would pass 2^96 on the tensor cores, and
// the queries' 2^{l} come near fp32's smallest normal numbers (2^-126) once q is small.
inline constexpr float kSafeLog2 = 96.f;

// What the gradient walk leaves to the WMMA bodies (backward_wmma.cuh's run_listed_chunks),
// from a thread's sub-chunk and feature pair; the state walk ORs it over the chunk:
//   kWholeChunk  a gate above 0, or not finite: every factor ≤ 1 but k̄'s no longer holds.
// A strong feature is the walk's own (zero k̄, dv's terms apart, its columns rewritten).
struct grads_listing {
  enum : unsigned { kWholeChunk = 0x80u };
};
// `total`: a sub-chunk's summed log2 gates in one feature (NaN counts as strong).
GLABENCH_WALK_HD inline bool strong_feature(float total) {
  return !(total >= -kSafeLog2);
}
// l0, l1: the log2 gates of two features, cumulative over the sub-chunk.
GLABENCH_WALK_HD inline unsigned walk_grads_listing(const float (&l0)[SUB],
                                                    const float (&l1)[SUB]) {
  bool ordered = true;
  float prev0 = 0.f, prev1 = 0.f;
#ifdef __CUDACC__
#pragma unroll
#endif
  for (int u = 0; u < SUB; ++u) {
    ordered = ordered && l0[u] <= prev0 && l1[u] <= prev1;
    prev0 = l0[u], prev1 = l1[u];
  }
  if (!ordered || !(l0[SUB - 1] > -INFINITY && l1[SUB - 1] > -INFINITY))
    return grads_listing::kWholeChunk;
  return 0u;
}

}  // namespace glabench::chunked::walk
