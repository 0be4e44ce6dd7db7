// Packed variable-length batches by splitting (varlen.hpp). Sequence n is tokens
// [cu_seqlens[n], cu_seqlens[n+1]) of the one row: a contiguous block of every [1,T,H,D]
// token tensor, and of every row h of lse [1,H,T]; its states are block n of [N,H,K,V].
#include "varlen.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace glabench::reference {
namespace {

// The tokens [begin, end) of a [1,T,H,D] tensor, as a [1,end-begin,H,D] one.
tensor token_slice(const tensor& t, int64_t begin, int64_t end) {
  const int64_t row = t.shape[2] * t.shape[3];
  tensor out({1, end - begin, t.shape[2], t.shape[3]});
  std::copy(t.data.begin() + begin * row, t.data.begin() + end * row, out.data.begin());
  return out;
}
void token_scatter(const tensor& part, int64_t begin, tensor& whole) {
  const int64_t row = whole.shape[2] * whole.shape[3];
  std::copy(part.data.begin(), part.data.end(), whole.data.begin() + begin * row);
}

// State n of an [N,H,K,V] tensor, as a [1,H,K,V] one.
tensor state_slice(const tensor& t, int64_t n) {
  const int64_t size = t.shape[1] * t.shape[2] * t.shape[3];
  tensor out({1, t.shape[1], t.shape[2], t.shape[3]});
  std::copy(t.data.begin() + n * size, t.data.begin() + (n + 1) * size, out.data.begin());
  return out;
}
void state_scatter(const tensor& part, int64_t n, tensor& whole) {
  std::copy(part.data.begin(), part.data.end(), whole.data.begin() + n * part.numel());
}

// lse [1,H,len] of a sequence into lse [1,H,T] at `begin`.
void lse_scatter(const tensor& part, int64_t begin, tensor& whole) {
  const int64_t H = whole.shape[1], T = whole.shape[2], len = part.shape[2];
  for (int64_t h = 0; h < H; ++h)
    std::copy_n(part.data.begin() + h * len, len, whole.data.begin() + h * T + begin);
}

void check_shape(const char* name, const tensor& t, const std::vector<int64_t>& want) {
  if (t.shape != want)
    throw std::invalid_argument(std::string("varlen: ") + name + " has shape " +
                                shape_string(t.shape) + ", expected " + shape_string(want));
}

void check_inputs(const problem& p, const op_inputs& in) {
  check_cu_seqlens(p);
  check_shape("q", in.q, p.qk_shape());
  check_shape("k", in.k, p.qk_shape());
  check_shape("v", in.v, p.v_shape());
  if (p.has_gate()) check_shape("g", in.g, p.qk_shape());
  if (p.has_state() && in.h0) check_shape("h0", *in.h0, p.state_shape());
  if (in.d_o) check_shape("d_o", *in.d_o, p.v_shape());
  if (p.has_state() && in.dht) check_shape("dht", *in.dht, p.state_shape());
}

// Sequence n's problem and inputs.
problem sequence_problem(const problem& p, int64_t n) {
  problem s = p;
  s.B = 1;
  s.T = sequence_tokens(p, n).count;
  s.cu_seqlens.clear();
  return s;
}
op_inputs sequence_inputs(const problem& p, const op_inputs& in, int64_t n) {
  const token_span span = sequence_tokens(p, n);
  const int64_t begin = span.first, end = span.first + span.count;
  op_inputs s;
  s.q = token_slice(in.q, begin, end);
  s.k = token_slice(in.k, begin, end);
  s.v = token_slice(in.v, begin, end);
  if (p.has_gate()) s.g = token_slice(in.g, begin, end);
  s.u = in.u;
  if (p.has_state() && in.h0) s.h0 = state_slice(*in.h0, n);
  if (in.d_o) s.d_o = token_slice(*in.d_o, begin, end);
  if (p.has_state() && in.dht) s.dht = state_slice(*in.dht, n);
  return s;
}

}  // namespace

op_outputs varlen_forward(const problem& p, const op_inputs& in, const forward_fn& op) {
  check_inputs(p, in);
  op_outputs out;
  out.o = tensor(p.v_shape());
  if (p.has_state()) out.ht = tensor(p.state_shape());
  if (p.op == op_kind::softmax_attn) out.lse = tensor(p.lse_shape());
  for (int64_t n = 0; n < p.num_states(); ++n) {
    const op_outputs s = op(sequence_problem(p, n), sequence_inputs(p, in, n));
    const int64_t begin = p.cu_seqlens[n];
    token_scatter(s.o, begin, out.o);
    if (p.has_state()) state_scatter(s.ht, n, out.ht);
    if (p.op == op_kind::softmax_attn) lse_scatter(s.lse, begin, out.lse);
  }
  return out;
}

op_gradients varlen_backward(const problem& p, const op_inputs& in, const backward_fn& op) {
  check_inputs(p, in);
  op_gradients grad;
  grad.dq = tensor(p.qk_shape());
  grad.dk = tensor(p.qk_shape());
  grad.dv = tensor(p.v_shape());
  if (p.has_gate()) grad.dg = tensor(p.qk_shape());
  if (p.has_bonus()) grad.du = tensor(p.u_shape());
  const bool has_h0 = p.has_state() && in.h0.has_value();
  if (has_h0) grad.dh0 = tensor(p.state_shape());
  for (int64_t n = 0; n < p.num_states(); ++n) {
    const op_gradients s = op(sequence_problem(p, n), sequence_inputs(p, in, n));
    const int64_t begin = p.cu_seqlens[n];
    token_scatter(s.dq, begin, grad.dq);
    token_scatter(s.dk, begin, grad.dk);
    token_scatter(s.dv, begin, grad.dv);
    if (p.has_gate()) token_scatter(s.dg, begin, grad.dg);
    if (p.has_bonus())
      for (size_t i = 0; i < grad.du.data.size(); ++i) grad.du.data[i] += s.du.data[i];
    if (has_h0) state_scatter(s.dh0, n, grad.dh0);
  }
  return grad;
}

}  // namespace glabench::reference
