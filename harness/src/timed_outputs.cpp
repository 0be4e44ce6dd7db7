#include "timed_outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor_check.hpp"

namespace glabench {

namespace {

// An exponent field of all ones is NaN or ±Inf in every IEEE-style format.
template <typename Bits>
size_t count_all_ones(const std::vector<std::byte>& bytes, int shift, Bits mask) {
  size_t n = 0;
  for (size_t at = 0; at + sizeof(Bits) <= bytes.size(); at += sizeof(Bits)) {
    Bits bits;
    std::memcpy(&bits, bytes.data() + at, sizeof bits);
    n += ((bits >> shift) & mask) == mask;
  }
  return n;
}

}  // namespace

size_t count_non_finite(const std::vector<std::byte>& bytes, dtype d) {
  switch (d) {
    case dtype::fp64:
      return count_all_ones<uint64_t>(bytes, 52, 0x7FF);
    case dtype::fp32:
      return count_all_ones<uint32_t>(bytes, 23, 0xFF);
    case dtype::bf16:
      return count_all_ones<uint16_t>(bytes, 7, 0xFF);
    case dtype::fp16:
      return count_all_ones<uint16_t>(bytes, 10, 0x1F);
  }
  return 0;
}

timed_outputs_check check_timed_outputs(const output_snapshot& verified,
                                        const output_snapshot& timed, double threshold) {
  timed_outputs_check out;
  out.identical = true;
  std::vector<std::string> problems;
  for (const auto& t : timed.tensors) {
    const auto v = std::find_if(verified.tensors.begin(), verified.tensors.end(),
                                [&](const auto& e) { return e.name == t.name; });
    if (v == verified.tensors.end() || v->shape != t.shape || v->type != t.type) {
      out.identical = false;
      problems.push_back(t.name + " is not the quick verify's tensor");
      continue;
    }
    if (const size_t bad = count_non_finite(t.bytes, t.type)) {
      out.identical = out.identical && t.bytes == v->bytes;
      out.max_rel_l2 = NAN;
      problems.push_back(fmt::format("{} holds {} NaN or Inf", t.name, bad));
      continue;
    }
    if (t.bytes == v->bytes) continue;
    out.identical = false;
    const tensor_check c = compare_tensor(t.name, unpack(t.bytes.data(), t.shape, t.type),
                                          unpack(v->bytes.data(), v->shape, v->type), threshold);
    if (!std::isnan(out.max_rel_l2)) out.max_rel_l2 = std::max(out.max_rel_l2, c.rel_l2);
    if (!c.passed)
      problems.push_back(fmt::format("{} differs from the quick verify's: rel_l2 {:.3g} > {:.3g}",
                                     t.name, c.rel_l2, threshold));
  }
  if (timed.tensors.size() != verified.tensors.size()) {
    out.identical = false;
    problems.push_back("the timed call has other outputs than the quick verify's");
  }
  if (!problems.empty()) {
    out.failure = "the last timed call's outputs: ";
    for (size_t i = 0; i < problems.size(); ++i) out.failure += (i ? "; " : "") + problems[i];
  }
  return out;
}

}  // namespace glabench
