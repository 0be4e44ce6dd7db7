#include "glabench/reference/ops.hpp"

#include "ops_internal.hpp"
#include "varlen.hpp"

namespace glabench::reference {

// A packed batch runs sequence by sequence (varlen.hpp), each through the function itself.
op_outputs gla_forward(const problem& p, const op_inputs& in, formulation f) {
  if (p.varlen())
    return varlen_forward(
        p, in, [f](const problem& s, const op_inputs& x) { return gla_forward(s, x, f); });
  return f == formulation::recurrent ? gla_forward_recurrent(p, in) : gla_forward_parallel(p, in);
}
op_gradients gla_backward(const problem& p, const op_inputs& in, formulation f) {
  if (p.varlen())
    return varlen_backward(
        p, in, [f](const problem& s, const op_inputs& x) { return gla_backward(s, x, f); });
  return f == formulation::recurrent ? gla_backward_recurrent(p, in) : gla_backward_parallel(p, in);
}
op_outputs rwkv6_forward(const problem& p, const op_inputs& in, formulation f) {
  if (p.varlen())
    return varlen_forward(
        p, in, [f](const problem& s, const op_inputs& x) { return rwkv6_forward(s, x, f); });
  return f == formulation::recurrent ? rwkv6_forward_recurrent(p, in)
                                     : rwkv6_forward_parallel(p, in);
}
op_gradients rwkv6_backward(const problem& p, const op_inputs& in, formulation f) {
  if (p.varlen())
    return varlen_backward(
        p, in, [f](const problem& s, const op_inputs& x) { return rwkv6_backward(s, x, f); });
  return f == formulation::recurrent ? rwkv6_backward_recurrent(p, in)
                                     : rwkv6_backward_parallel(p, in);
}

op_outputs forward(const problem& p, const op_inputs& in, formulation f) {
  switch (p.op) {
    case op_kind::gla:
      return gla_forward(p, in, f);
    case op_kind::rwkv6:
      return rwkv6_forward(p, in, f);
    case op_kind::softmax_attn:
      return softmax_attn_forward(p, in);
  }
  return {};
}

op_gradients backward(const problem& p, const op_inputs& in, formulation f) {
  switch (p.op) {
    case op_kind::gla:
      return gla_backward(p, in, f);
    case op_kind::rwkv6:
      return rwkv6_backward(p, in, f);
    case op_kind::softmax_attn:
      return softmax_attn_backward(p, in);
  }
  return {};
}

}  // namespace glabench::reference
