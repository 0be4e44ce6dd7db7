#include "glabench/reference/problem.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace glabench {

std::string_view op_name(op_kind op) {
  switch (op) {
    case op_kind::gla:
      return "gla";
    case op_kind::rwkv6:
      return "rwkv6";
    case op_kind::softmax_attn:
      return "softmax_attn";
  }
  return "?";
}

std::optional<op_kind> parse_op(std::string_view name) {
  for (op_kind op : {op_kind::gla, op_kind::rwkv6, op_kind::softmax_attn})
    if (op_name(op) == name) return op;
  return std::nullopt;
}

void check_cu_seqlens(const problem& p) {
  if (!p.varlen()) return;
  auto fail = [](const std::string& why) { throw std::invalid_argument("cu_seqlens: " + why); };
  const auto& cu = p.cu_seqlens;
  if (p.B != 1) fail("a packed batch needs B = 1, found B = " + std::to_string(p.B));
  if (cu.size() < 2) fail("needs N + 1 ≥ 2 offsets, found 1");
  if (cu.front() != 0) fail("must start at 0, found " + std::to_string(cu.front()));
  for (size_t n = 1; n < cu.size(); ++n)
    if (cu[n] <= cu[n - 1])
      fail("must increase strictly (every sequence at least one token): element " +
           std::to_string(n) + " is " + std::to_string(cu[n]) + " after " +
           std::to_string(cu[n - 1]));
  if (cu.back() != p.T)
    fail("must end at T = " + std::to_string(p.T) + ", found " + std::to_string(cu.back()));
}

std::vector<int64_t> packed_offsets(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> offsets = {0};
  for (const int64_t n : lengths) {
    if (n < 1)
      throw std::invalid_argument("sequence lengths must be at least 1, found " +
                                  std::to_string(n));
    if (n > std::numeric_limits<int64_t>::max() - offsets.back())
      throw std::invalid_argument("sequence lengths sum past 2^63 − 1");
    offsets.push_back(offsets.back() + n);
  }
  return offsets;
}

token_span sequence_tokens(const problem& p, int64_t b) {
  if (!p.varlen()) return {b, 0, p.T};
  const int64_t first = p.cu_seqlens[size_t(b)];
  return {0, first, p.cu_seqlens[size_t(b) + 1] - first};
}

std::vector<named_tensor_ref> differentiable_inputs(const problem& p, op_inputs& in) {
  std::vector<named_tensor_ref> refs = {{"q", &in.q}, {"k", &in.k}, {"v", &in.v}};
  if (p.has_gate()) refs.push_back({"g", &in.g});
  if (p.has_bonus()) refs.push_back({"u", &in.u});
  if (p.has_state() && in.h0) refs.push_back({"h0", &*in.h0});
  return refs;
}

std::vector<named_tensor_ref> gradient_tensors(const problem& p, bool has_h0, op_gradients& g) {
  std::vector<named_tensor_ref> refs = {{"dq", &g.dq}, {"dk", &g.dk}, {"dv", &g.dv}};
  if (p.has_gate()) refs.push_back({"dg", &g.dg});
  if (p.has_bonus()) refs.push_back({"du", &g.du});
  if (p.has_state() && has_h0) refs.push_back({"dh0", &g.dh0});
  return refs;
}

}  // namespace glabench
