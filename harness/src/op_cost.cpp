#include "op_cost.hpp"

namespace glabench {

op_cost essential_cost(const problem& p, size_t dtype_bytes, bool has_h0, bool with_backward) {
  const double BTH = double(p.B) * double(p.T) * double(p.H);
  const double qk = BTH * double(p.K), v = BTH * double(p.V);
  const double state = double(p.B) * double(p.H) * double(p.K) * double(p.V);
  const double lse = BTH;

  // Elements read and written by the forward, then by the backward.
  double fwd_in = 2 * qk + v, fwd_out = v;
  double bwd_in = 2 * qk + 2 * v, bwd_out = 2 * qk + v;  // q k v do → dq dk dv
  op_cost c;
  if (p.op == op_kind::softmax_attn) {
    fwd_out += lse;
    bwd_in += v + lse;  // o and lse
    const double matmul = 4 * double(p.B) * double(p.H) * double(p.T) * double(p.T) * double(p.K);
    c.flops = (p.causal ? 0.5 : 1.0) * matmul * (with_backward ? 3.5 : 1.0);
  } else {
    fwd_in += qk;          // g
    fwd_out += state;      // ht
    bwd_in += qk + state;  // g, dht
    bwd_out += qk;         // dg
    if (has_h0) {
      fwd_in += state;
      bwd_in += state;
      bwd_out += state;  // dh0
    }
    if (p.op == op_kind::rwkv6) {
      fwd_in += double(p.H) * double(p.K);  // u
      bwd_in += double(p.H) * double(p.K);
      bwd_out += double(p.H) * double(p.K);  // du
    }
    c.flops = BTH * double(p.K) * double(p.V) * (with_backward ? 14.0 : 5.0);
  }
  const double elements = fwd_in + fwd_out + (with_backward ? bwd_in + bwd_out : 0.0);
  c.bytes = elements * double(dtype_bytes);
  return c;
}

}  // namespace glabench
