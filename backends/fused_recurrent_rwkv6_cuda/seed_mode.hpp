// Seed mode (FUSED_RECURRENT_RWKV6_CUDA_MODE=seed): the forward tiled as seed 004
// describes it (seed_forward.cuh). The article covers only the forward; seed mode's
// backward is the fast mode's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "scan_args.hpp"

namespace glabench::fused_recurrent_rwkv6 {

// BK (or BV) of the seed: min(32, the next power of two ≥ the head size).
inline int64_t seed_block(int64_t head_size) {
  int64_t block = 1;
  while (block < head_size && block < 32) block *= 2;
  return block;
}

// The forward's workspace: the NK partial outputs, in the compute type.
size_t seed_forward_workspace_bytes(parallel_scan::storage s, int64_t B, int64_t T, int64_t H,
                                    int64_t K, int64_t V);

cudaError_t launch_seed_forward(parallel_scan::storage s, const parallel_scan::scan_args& a);

}  // namespace glabench::fused_recurrent_rwkv6
