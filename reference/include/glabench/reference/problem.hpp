// The three operations of docs/design.md §1 and the tensors that go in and out of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "glabench/reference/tensor.hpp"

namespace glabench {

enum class op_kind { gla, rwkv6, softmax_attn };

std::string_view op_name(op_kind op);
std::optional<op_kind> parse_op(std::string_view name);

// Sizes and scalars of one problem. For softmax_attn, K is the q/k head size D.
struct problem {
  op_kind op = op_kind::gla;
  int64_t B = 1, T = 1, H = 1, K = 1, V = 1;
  double scale = 1.0;
  bool causal = true;  // softmax_attn only
  // A packed variable-length batch (docs/design.md §1): empty, or N + 1 offsets with
  // B == 1, cu_seqlens[0] == 0, cu_seqlens[N] == T and every sequence at least one token
  // long (strictly increasing). Sequence n is tokens [cu_seqlens[n], cu_seqlens[n+1]) of
  // the one row; each starts from its own h0[n] (or zero), ends in its own ht[n], and
  // softmax_attn attends only within it. States are then [N,H,K,V].
  std::vector<int64_t> cu_seqlens;

  bool varlen() const { return !cu_seqlens.empty(); }
  // States per head: B, or N for a packed batch.
  int64_t num_states() const { return varlen() ? static_cast<int64_t>(cu_seqlens.size()) - 1 : B; }
  std::vector<int64_t> qk_shape() const { return {B, T, H, K}; }
  std::vector<int64_t> v_shape() const { return {B, T, H, V}; }
  std::vector<int64_t> state_shape() const { return {num_states(), H, K, V}; }
  std::vector<int64_t> u_shape() const { return {H, K}; }
  std::vector<int64_t> lse_shape() const { return {B, H, T}; }
  bool has_gate() const { return op != op_kind::softmax_attn; }
  bool has_state() const { return op != op_kind::softmax_attn; }
  bool has_bonus() const { return op == op_kind::rwkv6; }
};

// Throws std::invalid_argument unless p.cu_seqlens is empty or a valid packed batch:
// B == 1, N + 1 ≥ 2 offsets, from 0, strictly increasing, ending at T.
void check_cu_seqlens(const problem& p);

// The offsets (cu_seqlens) of sequences of these lengths: 0, then the running sums. Throws
// std::invalid_argument for a length below 1 or a sum past 2^63 − 1; check_cu_seqlens
// checks the rest against a problem.
std::vector<int64_t> packed_offsets(const std::vector<int64_t>& lengths);

// Where sequence b's tokens lie: `count` tokens from token `first` of token row `row` —
// row b of B sequences of T tokens, or tokens [cu_seqlens[b], cu_seqlens[b+1]) of a packed
// batch's one row. Its state is row b of the states either way.
struct token_span {
  int64_t row, first, count;
};
token_span sequence_tokens(const problem& p, int64_t b);

// Inputs in the ABI's convention: rwkv6 stores r in q and w in g. `g` and `u` are
// empty where the op has none. `d_o` and `dht` are the cotangents of o and ht.
struct op_inputs {
  tensor q, k, v, g, u;
  std::optional<tensor> h0;
  std::optional<tensor> d_o;
  std::optional<tensor> dht;
};

struct op_outputs {
  tensor o;
  tensor ht;   // gla, rwkv6
  tensor lse;  // softmax_attn
};

// du for rwkv6 only; dh0 only when h0 was given; dg empty for softmax_attn.
struct op_gradients {
  tensor dq, dk, dv, dg, du, dh0;
};

// A named view of the differentiable inputs and their gradients, in one fixed order
// (q, k, v, g, u, h0), skipping those the problem does not have.
struct named_tensor_ref {
  std::string name;
  tensor* value;
};
std::vector<named_tensor_ref> differentiable_inputs(const problem& p, op_inputs& in);
std::vector<named_tensor_ref> gradient_tensors(const problem& p, bool has_h0, op_gradients& grads);

}  // namespace glabench
