#include "quick_verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <stdexcept>

#include "glabench/reference/ops.hpp"
#include "tensor_check.hpp"

namespace glabench {
namespace {

// A head is (b, h): sequence b of the B, or of a packed batch's N (backend_runner's
// download_head_* take them so).
std::vector<head_index> sampled_heads(const problem& p) {
  std::vector<head_index> heads = {{0, 0}};
  if (p.num_states() > 1 || p.H > 1) heads.push_back({p.num_states() - 1, p.H - 1});
  return heads;
}

// [B, T, H, X] → [1, count, 1, X]: head h of a sequence's tokens (sequence_tokens).
tensor slice_bthx(const tensor& t, const token_span& s, int64_t h) {
  const int64_t T = t.shape[1], H = t.shape[2], X = t.shape[3];
  tensor out({1, s.count, 1, X});
  for (int64_t i = 0; i < s.count; ++i)
    std::copy_n(t.ptr() + ((s.row * T + s.first + i) * H + h) * X, X, out.ptr() + i * X);
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

// The problem of one head of sequence b: one sequence of its tokens.
problem one_head(problem p, int64_t b) {
  p.T = sequence_tokens(p, b).count;
  p.B = 1;
  p.H = 1;
  p.cu_seqlens.clear();
  return p;
}

op_inputs head_inputs(const problem& p, const op_inputs& in, head_index at, dtype d,
                      dtype state_d) {
  const token_span s = sequence_tokens(p, at.b);
  op_inputs r;
  r.q = round_to(slice_bthx(in.q, s, at.h), d);
  r.k = round_to(slice_bthx(in.k, s, at.h), d);
  r.v = round_to(slice_bthx(in.v, s, at.h), d);
  if (!in.g.empty()) r.g = round_to(slice_bthx(in.g, s, at.h), d);
  if (!in.u.empty()) r.u = round_to(slice_u(in.u, at), d);
  if (in.h0) r.h0 = round_to(slice_bh(*in.h0, at), state_d);
  if (in.d_o) r.d_o = round_to(slice_bthx(*in.d_o, s, at.h), d);
  if (in.dht) r.dht = round_to(slice_bh(*in.dht, at), state_d);
  return r;
}

void add_check(std::map<std::string, tensor_check>& worst, const std::string& name,
               const tensor& got, const tensor& want, double tol,
               const std::optional<output_dtypes>& returned) {
  keep_worst(worst[name],
             compare_tensor(name, got, want, tol,
                            returned ? std::optional(returned->of(name)) : std::nullopt));
}

// Rows `at` of a one-head tensor [1, T, 1, X] (or lse's [1, 1, T], X = 1) as [rows, X].
tensor pick_rows(const tensor& t, const std::vector<int64_t>& at) {
  const bool tokens = t.shape.size() == 4;
  const int64_t n = int64_t(at.size()), X = tokens ? t.shape[3] : 1;
  tensor out(tokens ? std::vector<int64_t>{n, X} : std::vector<int64_t>{n});
  for (size_t r = 0; r < at.size(); ++r) std::copy_n(t.ptr() + at[r] * X, X, out.ptr() + r * X);
  return out;
}

void check_rows(std::map<std::string, tensor_check>& worst, const reference::softmax_rows& want,
                const head_result& got, double tol, const std::optional<output_dtypes>& returned) {
  add_check(worst, "o", pick_rows(got.out.o, want.queries), want.o, tol, returned);
  add_check(worst, "lse", pick_rows(got.out.lse, want.queries), want.lse, tol, returned);
  if (!got.grads) return;
  add_check(worst, "dq", pick_rows(got.grads->dq, want.queries), want.dq, tol, returned);
  if (want.keys.empty()) return;
  add_check(worst, "dk", pick_rows(got.grads->dk, want.keys), want.dk, tol, returned);
  add_check(worst, "dv", pick_rows(got.grads->dv, want.keys), want.dv, tol, returned);
}

// rwkv6's du of head h summed over every sequence, as the backend's du row h holds it:
// the reference on head h of every sequence at once (H = 1; its sum over them, in order,
// on the reference's threads).
tensor du_over_sequences(const problem& p, const op_inputs& in, int64_t h, dtype d, dtype state_d) {
  problem one = p;
  one.H = 1;
  auto tokens = [&](const tensor& t) {  // [B,T,H,X] → [B,T,1,X]
    const int64_t rows = t.shape[0] * t.shape[1], H = t.shape[2], X = t.shape[3];
    tensor out({t.shape[0], t.shape[1], 1, X});
    for (int64_t r = 0; r < rows; ++r) std::copy_n(t.ptr() + (r * H + h) * X, X, out.ptr() + r * X);
    return round_to(out, d);
  };
  auto states = [&](const tensor& t) {  // [N,H,K,V] → [N,1,K,V]
    const int64_t N = t.shape[0], H = t.shape[1], KV = t.shape[2] * t.shape[3];
    tensor out({N, 1, t.shape[2], t.shape[3]});
    for (int64_t n = 0; n < N; ++n) std::copy_n(t.ptr() + (n * H + h) * KV, KV, out.ptr() + n * KV);
    return round_to(out, state_d);
  };
  op_inputs x;
  x.q = tokens(in.q), x.k = tokens(in.k), x.v = tokens(in.v), x.g = tokens(in.g);
  x.u = round_to(slice_u(in.u, {0, h}), d);
  if (in.h0) x.h0 = states(*in.h0);
  if (in.d_o) x.d_o = tokens(*in.d_o);
  if (in.dht) x.dht = states(*in.dht);
  return reference::backward(one, x).du;
}

}  // namespace

std::vector<int64_t> sampled_query_rows(int64_t T) {
  const int64_t n = std::min(T, kQuickVerifyQueryRows);
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(n == 1 ? 0 : i * (T - 1) / (n - 1));
  return rows;
}

std::vector<int64_t> sampled_key_rows(const problem& p, bool with_backward) {
  std::vector<int64_t> rows;
  if (!with_backward || !p.causal) return rows;
  for (int64_t j = std::max<int64_t>(0, p.T - 16); j < p.T; ++j) rows.push_back(j);
  for (int64_t i = 0; i < 8; ++i)
    if (const int64_t j = p.T - 256 + i * 30; j >= 0) rows.push_back(j);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::string quick_verify_note(const problem& p, const std::vector<expected_head>& want,
                              bool with_backward) {
  if (with_backward && p.has_bonus() && p.num_states() > kQuickVerifyDuMaxSequences)
    return fmt::format(
        "quick verify: du not checked (it sums over {} sequences, more than {}; verify on a "
        "fixture checks it)",
        p.num_states(), kQuickVerifyDuMaxSequences);
  if (!with_backward || p.causal) return {};
  for (const auto& e : want)
    if (e.rows)
      return fmt::format(
          "quick verify: o, lse, dq on {} sampled rows a head; dk, dv not checked (full "
          "attention at T {} > {}: their reference needs every row's lse)",
          e.rows->queries.size(), p.T, kQuickVerifyWholeHeadMaxT);
  return {};
}

std::vector<expected_head> reference_heads(const problem& p, const op_inputs& in, dtype d,
                                           dtype state_d, bool with_backward,
                                           int64_t whole_head_max_T) {
  std::vector<std::future<expected_head>> pending;
  for (head_index at : sampled_heads(p))
    pending.push_back(std::async(std::launch::async, [&, at] {
      const problem head = one_head(p, at.b);
      const op_inputs x = head_inputs(p, in, at, d, state_d);
      if (head.op == op_kind::softmax_attn && head.T > whole_head_max_T)
        return expected_head{
            at,
            {},
            std::nullopt,
            reference::softmax_attn_rows(head, x, 0, 0, sampled_query_rows(head.T),
                                         sampled_key_rows(head, with_backward), with_backward),
            std::nullopt};
      expected_head e{at, reference::forward(head, x), std::nullopt, std::nullopt, std::nullopt};
      if (with_backward) e.grads = reference::backward(head, x);
      return e;
    }));
  std::vector<expected_head> out;
  for (auto& f : pending) out.push_back(f.get());
  if (with_backward && p.has_bonus() && p.num_states() <= kQuickVerifyDuMaxSequences) {
    std::map<int64_t, tensor> du;  // a sum per distinct head
    for (auto& e : out) {
      if (!du.count(e.at.h)) du[e.at.h] = du_over_sequences(p, in, e.at.h, d, state_d);
      e.du = du[e.at.h];
    }
  }
  return out;
}

std::vector<tensor_check> check_heads(const problem& p, bool has_h0,
                                      const std::vector<expected_head>& want, double tol,
                                      const std::function<head_result(head_index)>& fetch,
                                      const std::optional<output_dtypes>& returned) {
  std::map<std::string, tensor_check> worst;
  for (const auto& e : want) {
    const head_result got = fetch(e.at);
    if (e.rows) {
      check_rows(worst, *e.rows, got, tol, returned);
      continue;
    }
    add_check(worst, "o", got.out.o, e.out.o, tol, returned);
    if (p.has_state()) add_check(worst, "ht", got.out.ht, e.out.ht, tol, returned);
    if (p.op == op_kind::softmax_attn)
      add_check(worst, "lse", got.out.lse, e.out.lse, tol, returned);
    if (!got.grads) continue;
    add_check(worst, "dq", got.grads->dq, e.grads->dq, tol, returned);
    add_check(worst, "dk", got.grads->dk, e.grads->dk, tol, returned);
    add_check(worst, "dv", got.grads->dv, e.grads->dv, tol, returned);
    if (p.has_gate()) add_check(worst, "dg", got.grads->dg, e.grads->dg, tol, returned);
    if (has_h0) add_check(worst, "dh0", got.grads->dh0, e.grads->dh0, tol, returned);
    if (e.du) add_check(worst, "du", got.grads->du, *e.du, tol, returned);
  }
  std::vector<tensor_check> out;
  for (auto& [name, c] : worst) out.push_back(c);
  return out;
}

}  // namespace glabench
