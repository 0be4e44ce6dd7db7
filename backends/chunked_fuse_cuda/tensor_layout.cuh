// The ABI's token tensors, [B,T,H,D] row-major (docs/design.md §1): where one head's rows
// start. Every kernel family reads its tokens through it (wmma/chunk_io.cuh's slabs, the
// walks' cp.async loads).
#pragma once

#include <cstdint>

namespace glabench::chunked {

// The first row of head bh = b·H + h in a [B,T,H,D] tensor, in rows of D: (b, 0, h).
__host__ __device__ __forceinline__ int64_t head_row(int bh, int H, int64_t T) {
  return static_cast<int64_t>(bh / H) * T * H + bh % H;
}

}  // namespace glabench::chunked
