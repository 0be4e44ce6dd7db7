// What --backend, --op and --dtype select (verify, bench, decode-drift): read by one set
// of rules, so that each command names the same choices in the same words. Each throws
// std::invalid_argument (exit 2) naming the option and the value; repeats are dropped.
#include <algorithm>
#include <stdexcept>

#include "commands.hpp"

namespace glabench::cli {
namespace {

template <typename T>
void add_once(std::vector<T>& out, const T& x) {
  if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
}

}  // namespace

std::vector<const loaded_backend*> select_backends(const backend_registry& reg,
                                                   const std::vector<std::string>& names) {
  std::vector<const loaded_backend*> out;
  for (const auto& name : names) {
    const loaded_backend* b = reg.find(name);
    if (!b)
      throw std::invalid_argument("--backend '" + name +
                                  "' is not a known backend (found: " + reg.names() + ")");
    add_once(out, b);
  }
  if (names.empty())
    for (const auto& b : reg.backends) out.push_back(&b);
  if (out.empty())
    throw std::invalid_argument("no backends found; build them or pass --backend-lib");
  return out;
}

std::vector<op_kind> parse_ops(const std::vector<std::string>& names) {
  std::vector<op_kind> out;
  for (const auto& name : names) {
    const auto op = parse_op(name);
    if (!op)
      throw std::invalid_argument("--op '" + name + "' is not one of gla, rwkv6, softmax_attn");
    add_once(out, *op);
  }
  return out;
}

std::vector<dtype> parse_dtypes(const std::vector<std::string>& names) {
  std::vector<dtype> out;
  for (const auto& name : names) {
    const auto d = parse_dtype(name);
    if (!d)
      throw std::invalid_argument("--dtype '" + name + "' is not one of fp64, fp32, fp16, bf16");
    add_once(out, *d);
  }
  return out;
}

}  // namespace glabench::cli
