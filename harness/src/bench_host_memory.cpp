#include "bench_host_memory.hpp"

#include <algorithm>

#include "quick_verify.hpp"

namespace glabench {

double bench_host_bytes(const problem& p, size_t storage_bytes, bool with_backward,
                        bool reference_gradients) {
  const double BTH = double(p.B) * double(p.T) * double(p.H);
  const double qk = BTH * double(p.K), v = BTH * double(p.V);
  const double states = double(p.num_states()) * double(p.H) * double(p.K) * double(p.V);
  const bool gated = p.has_gate();
  // Elements: the inputs (d_o and dht too), the outputs.
  double inputs = 2 * qk + 2 * v + (gated ? qk : 0) + (p.has_bonus() ? double(p.H) * p.K : 0);
  double outputs = v;
  if (p.has_state()) inputs += 2 * states, outputs += states;  // h0, dht; ht
  if (with_backward) {
    outputs += 2 * qk + v + (gated ? qk : 0);  // dq dk dv dg
    if (p.has_state()) outputs += states;      // dh0
  }
  const double snapshots = 2 * outputs * double(storage_bytes);
  const double compared = 2 * 8 * std::max(qk, v);
  // One sampled head: a sequence's tokens, at most T.
  const double T = double(p.T);
  double head = 2 * T * (3 * double(p.K) + 2 * double(p.V));  // inputs and outputs
  if (reference_gradients && gated) head += 3 * 8 * T * double(p.K);
  if (p.op == op_kind::softmax_attn && p.T <= kQuickVerifyWholeHeadMaxT) head += T * T;
  // Two sampled heads; rwkv6's du over up to kQuickVerifyDuMaxSequences sequences takes a
  // head of each at once (quick_verify.cpp).
  const bool du_heads = reference_gradients && p.has_bonus() && p.num_states() > 1 &&
                        p.num_states() <= kQuickVerifyDuMaxSequences;
  const double reference = (2 + (du_heads ? double(p.num_states()) : 0)) * 8 * head;
  return 1.25 * (8 * inputs + snapshots + compared + reference);
}

}  // namespace glabench
