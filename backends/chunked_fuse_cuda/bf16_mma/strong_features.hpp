// Strong features: a 16-token sub-chunk whose log2 gates in one key feature sum below
// −kSafeLog2. Their k̄ = k·2^{−l} would pass |k|·2^96 on the tensor cores, so the bf16 walks
// take them apart: the forward sums its diagonal block pair by pair
// (walk_inner_chunk_strong_gates), the gradient walk zeroes its k̄ and writes a few strong
// features' columns of dq, dk and dg again pair by pair (rewrite_strong_features); a half of
// K with more, or a chunk with a gate above 0 or not finite, goes to the WMMA bodies
// (walk_grads_listing, strong_slabs). Plain C++ besides the kernels: the CPU test
// tests/strong_features_test.cpp checks the listing.
#pragma once

#include <cmath>

#include "../walk_plan.hpp"

namespace glabench::chunked::walk {

// A feature whose gates over a sub-chunk sum below −kSafeLog2 (log2) has its diagonal
// block summed pair by pair: the keys' 2^{−l} would pass 2^96 on the tensor cores, and
// the queries' 2^{l} come near fp32's smallest normal numbers (2^-126) once q is small.
inline constexpr float kSafeLog2 = 96.f;

// What the gradient walk leaves to the WMMA bodies (backward_wmma.cuh's chunk_listed_grads_kernel);
// the state walk decides it for each chunk:
//   kWholeChunk  a gate above 0, or not finite (walk_grads_listing, ORed over the chunk):
//                every factor ≤ 1 but k̄'s no longer holds;
//   kSlab0/1     more than kRewriteMost strong features in features 0–63 / 64–127
//                (strong_slabs): the bodies take that half's dq, dk and dg, and the walk's
//                warps of that half store none. Up to kRewriteMost the walk writes their
//                columns again itself, each feature on the whole block, one after another.
// The gradient walk zeroes every strong feature's k̄ and adds its terms of dv apart
// (add_strong_features) in either case.
struct grads_listing {
  enum : unsigned { kSlab0 = 1u, kSlab1 = 2u, kWholeChunk = 0x80u };
};
inline constexpr int kRewriteMost = 4;
// `total`: a sub-chunk's summed log2 gates in one feature (NaN counts as strong).
GLABENCH_WALK_HD inline bool strong_feature(float total) {
  return !(total >= -kSafeLog2);
}
#ifdef __CUDACC__
// Features 2p and 2p + 1, where strong, into a mask of bit f % 32 of word f / 32 shared by
// the block's threads.
__device__ __forceinline__ void mark_strong_pair(unsigned* mask, int p, bool strong0,
                                                 bool strong1) {
  if (strong0 || strong1)
    atomicOr(mask + p / 16, (strong0 ? 1u : 0u) << (2 * (p % 16)) | (strong1 ? 2u : 0u)
                                                                        << (2 * (p % 16)));
}
#endif
// The K halves a chunk's strong features leave to the WMMA bodies: `mask` holds bit f % 32
// of word f / 32 for each feature f strong in some sub-chunk.
GLABENCH_WALK_HD inline unsigned strong_slabs(const unsigned (&mask)[KP / 32]) {
  auto count = [](unsigned x) {
#ifdef __CUDA_ARCH__
    return __popc(x);
#else
    return __builtin_popcount(x);
#endif
  };
  unsigned slabs = 0u;
  for (int half = 0; half < 2; ++half)
    if (count(mask[2 * half]) + count(mask[2 * half + 1]) > kRewriteMost)
      slabs |= grads_listing::kSlab0 << half;
  return slabs;
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
