#include "quick_verify.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>

#include "glabench/reference/ops.hpp"
#include "tensor_check.hpp"

namespace glabench {
namespace {

std::vector<head_index> sampled_heads(const problem& p) {
  std::vector<head_index> heads = {{0, 0}};
  if (p.B > 1 || p.H > 1) heads.push_back({p.B - 1, p.H - 1});
  return heads;
}

// [B, T, H, X] → [1, T, 1, X] at (b, h).
tensor slice_bthx(const tensor& t, head_index at) {
  const int64_t T = t.shape[1], H = t.shape[2], X = t.shape[3];
  tensor out({1, T, 1, X});
  for (int64_t i = 0; i < T; ++i)
    std::copy_n(t.ptr() + ((at.b * T + i) * H + at.h) * X, X, out.ptr() + i * X);
  return out;
}

// [B, H, rest…] → [1, 1, rest…] at (b, h).
tensor slice_bh(const tensor& t, head_index at) {
  std::vector<int64_t> shape = t.shape;
  const int64_t H = shape[1];
  shape[0] = shape[1] = 1;
  tensor out(shape);
  std::copy_n(t.ptr() + (at.b * H + at.h) * out.numel(), out.numel(), out.ptr());
  return out;
}

// u: [H, K] → [1, K] at h.
tensor slice_u(const tensor& t, head_index at) {
  tensor out({1, t.shape[1]});
  std::copy_n(t.ptr() + at.h * t.shape[1], t.shape[1], out.ptr());
  return out;
}

problem one_head(problem p) {
  p.B = 1;
  p.H = 1;
  return p;
}

op_inputs head_inputs(const op_inputs& in, head_index at, dtype d) {
  op_inputs r;
  r.q = round_to(slice_bthx(in.q, at), d);
  r.k = round_to(slice_bthx(in.k, at), d);
  r.v = round_to(slice_bthx(in.v, at), d);
  if (!in.g.empty()) r.g = round_to(slice_bthx(in.g, at), d);
  if (!in.u.empty()) r.u = round_to(slice_u(in.u, at), d);
  if (in.h0) r.h0 = round_to(slice_bh(*in.h0, at), d);
  if (in.d_o) r.d_o = round_to(slice_bthx(*in.d_o, at), d);
  if (in.dht) r.dht = round_to(slice_bh(*in.dht, at), d);
  return r;
}

void add_check(std::map<std::string, tensor_check>& worst, const std::string& name,
               const tensor& got, const tensor& want, double tol) {
  keep_worst(worst[name], compare_tensor(name, got, want, tol));
}

}  // namespace

std::vector<expected_head> reference_heads(const problem& p, const op_inputs& in, dtype d,
                                           bool with_backward) {
  std::vector<std::future<expected_head>> pending;
  for (head_index at : sampled_heads(p))
    pending.push_back(std::async(std::launch::async, [&, at] {
      const op_inputs x = head_inputs(in, at, d);
      expected_head e{at, reference::forward(one_head(p), x), std::nullopt};
      if (with_backward) e.grads = reference::backward(one_head(p), x);
      return e;
    }));
  std::vector<expected_head> out;
  for (auto& f : pending) out.push_back(f.get());
  return out;
}

std::vector<tensor_check> check_heads(const problem& p, bool has_h0,
                                     const std::vector<expected_head>& want, double tol,
                                     const std::function<head_result(head_index)>& fetch) {
  std::map<std::string, tensor_check> worst;
  for (const auto& e : want) {
    const head_result got = fetch(e.at);
    add_check(worst, "o", got.out.o, e.out.o, tol);
    if (p.has_state()) add_check(worst, "ht", got.out.ht, e.out.ht, tol);
    if (p.op == op_kind::softmax_attn) add_check(worst, "lse", got.out.lse, e.out.lse, tol);
    if (!got.grads) continue;
    add_check(worst, "dq", got.grads->dq, e.grads->dq, tol);
    add_check(worst, "dk", got.grads->dk, e.grads->dk, tol);
    add_check(worst, "dv", got.grads->dv, e.grads->dv, tol);
    if (p.has_gate()) add_check(worst, "dg", got.grads->dg, e.grads->dg, tol);
    if (has_h0) add_check(worst, "dh0", got.grads->dh0, e.grads->dh0, tol);
  }
  std::vector<tensor_check> out;
  for (auto& [name, c] : worst) out.push_back(c);
  return out;
}

}  // namespace glabench
