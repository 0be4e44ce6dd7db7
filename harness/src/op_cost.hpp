// The essential work of one call: the bytes an ideal kernel must move to and from
// memory (each input read once, each output written once, in its dtype) and the
// arithmetic of the op's natural form. Throughput and fraction-of-peak figures divide
// these by the measured time; they are the same for every backend, so they rank
// backends the way time does. Counting rules (README "Benchmarking"):
//   gla, rwkv6 forward: 5·K·V flops per token and head — the state's decay (1), the
//     k vᵀ update (2) and the output qᵀS (2); the bonus term of rwkv6 is O(K+V).
//   gla, rwkv6 backward: 9·K·V — the dS recurrence (3), dq, dk and dv (2 each); dg is
//     O(K). A backward that recomputes the forward state does more than this.
//   softmax_attn forward: 4·T·T·D per head (q kᵀ and P v), halved when causal;
//     backward 2.5× the forward (the FlashAttention convention).
#pragma once

#include "glabench/reference/problem.hpp"

namespace glabench {

struct op_cost {
  double bytes = 0;
  double flops = 0;
};

// `dtype_bytes`: the storage dtype's size; `state_bytes`: the states' (h0, ht, dh0, dht),
// which ABI 1.5 may store wider. `with_backward`: forward followed by backward, as
// `glabench bench` times fwdbwd.
op_cost essential_cost(const problem& p, size_t dtype_bytes, size_t state_bytes, bool has_h0,
                       bool with_backward);

}  // namespace glabench
