// Stage 1 of the chunk walk — the seed's `fwd_decay_cumsum`: each 16-token sub-chunk's
// cumulative log2 gates, in token order, kept in the thread's registers.
#pragma once

#include "layout.cuh"

namespace glabench::chunked::walk {

// ---- stage 1: fwd_decay_cumsum -------------------------------------------------------
// Thread (sub-chunk j, feature pair p): l[u] = Σ_{w ≤ u} g[16j + w]·log2 e in token
// order, and the sub-chunk's total T_j into tots[j]. `g` and `tots` are the byte offsets
// of the gate tile and the totals (the forward's layout unless a kernel has its own).
__device__ __forceinline__ void walk_decay_cumsum(unsigned char* smem, int j, int p,
                                                  float (&l0)[SUB], float (&l1)[SUB],
                                                  uint32_t g_tile = layout::g,
                                                  uint32_t tots = layout::tots) {
  float s0 = 0.f, s1 = 0.f;
#pragma unroll
  for (int u = 0; u < SUB; ++u) {
    const float2 g = pair_at(smem, g_tile + pair_offset(SUB * j + u, p));
    s0 = fmaf(g.x, kLog2e, s0);
    s1 = fmaf(g.y, kLog2e, s1);
    l0[u] = s0;
    l1[u] = s1;
  }
  at<float>(smem, tots + (j * KP + 2 * p) * 4) = s0;
  at<float>(smem, tots + (j * KP + 2 * p + 1) * 4) = s1;
}

}  // namespace glabench::chunked::walk
