// The host memory one bench configuration takes at its peak, so that bench skips, with a
// reason, a configuration the host cannot hold rather than being killed part-way.
#pragma once

#include <cstddef>

#include "glabench/reference/problem.hpp"

namespace glabench {

// Bytes, a quarter over what this counts: the fp64 inputs (q, k, v, g, u, the states, and
// d_o and dht, which bench draws whatever the mode); the two snapshots of the outputs in
// the storage dtype (the quick verify's and the last timed call's; `with_backward`: the
// gradients too); two fp64 copies of the largest output while the snapshots are compared;
// and the quick verify's fp64 reference on its two sampled heads (their inputs and
// outputs; with gradients, `reference_gradients`, which bench computes once any fwdbwd
// mode runs, and for gla or rwkv6 up to 8 column blocks' sums of dq, dk and dg,
// reference/src/gla_recurrent.cpp; for rwkv6's du over 2 to 16 sequences, a head of each
// more; softmax_attn up to whole heads of T ≤ 8192, a T×T score matrix each). One
// process's: bench compares it with the host's free memory divided among the launcher's
// processes on the node (launcher.hpp, local_world).
double bench_host_bytes(const problem& p, size_t storage_bytes, bool with_backward,
                        bool reference_gradients);

}  // namespace glabench
