#include "op_cost.hpp"

namespace glabench {

op_cost essential_cost(const problem& p, size_t dtype_bytes, size_t state_bytes, bool has_h0,
                       bool with_backward) {
  const double BTH = double(p.B) * double(p.T) * double(p.H);
  const double qk = BTH * double(p.K), v = BTH * double(p.V);
  const double state = double(p.num_states()) * double(p.H) * double(p.K) * double(p.V);
  const double lse = BTH;

  // Elements read and written by the forward, then by the backward; the states apart,
  // since they may be stored wider than the tokens (ABI 1.5: fp32 at 16-bit storage).
  double fwd_in = 2 * qk + v, fwd_out = v;
  double bwd_in = 2 * qk + 2 * v, bwd_out = 2 * qk + v;  // q k v do → dq dk dv
  double fwd_states = 0, bwd_states = 0;
  op_cost c;
  if (p.op == op_kind::softmax_attn) {
    fwd_out += lse;
    bwd_in += v + lse;  // o and lse
    const double matmul = 4 * double(p.B) * double(p.H) * double(p.T) * double(p.T) * double(p.K);
    c.flops = (p.causal ? 0.5 : 1.0) * matmul * (with_backward ? 3.5 : 1.0);
  } else {
    fwd_in += qk;        // g
    fwd_states = state;  // ht
    bwd_in += qk;        // g
    bwd_out += qk;       // dg
    bwd_states = state;  // dht
    if (has_h0) {
      fwd_states += state;      // h0
      bwd_states += 2 * state;  // h0, dh0
    }
    if (p.op == op_kind::rwkv6) {
      fwd_in += double(p.H) * double(p.K);  // u
      bwd_in += double(p.H) * double(p.K);
      bwd_out += double(p.H) * double(p.K);  // du
    }
    c.flops = BTH * double(p.K) * double(p.V) * (with_backward ? 14.0 : 5.0);
  }
  const double elements = fwd_in + fwd_out + (with_backward ? bwd_in + bwd_out : 0.0);
  const double states = fwd_states + (with_backward ? bwd_states : 0.0);
  c.bytes = elements * double(dtype_bytes) + states * double(state_bytes);
  return c;
}

}  // namespace glabench
