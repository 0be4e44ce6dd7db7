#include "tensor_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

namespace glabench {
namespace {

// The row-major index of flat position `i` in a tensor of `shape`.
std::vector<int64_t> index_of(size_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> at(shape.size());
  auto rest = static_cast<int64_t>(i);
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = shape[d] > 0 ? rest % shape[d] : 0;
    rest = shape[d] > 0 ? rest / shape[d] : rest;
  }
  return at;
}

}  // namespace

std::string describe_failure(const tensor_check& c) {
  if (c.non_finite == 0) return c.tensor;
  return fmt::format("{} ({} of {} NaN or Inf, the first at [{}])", c.tensor, c.non_finite,
                     c.elements, fmt::join(c.first_non_finite, ", "));
}

tensor_check compare_tensor(const std::string& name, const tensor& actual, const tensor& expected,
                            double threshold, std::optional<dtype> stored) {
  tensor_check c;
  c.tensor = name;
  c.threshold = threshold;
  if (actual.data.size() != expected.data.size()) {
    c.finite = false;
    c.rel_l2 = c.max_abs = std::numeric_limits<double>::infinity();
    return c;
  }
  c.elements = static_cast<int64_t>(actual.data.size());
  // excess: each element's error beyond what storing r in the dtype must cost it, which is
  // nothing in the normal range and |round(r) − r| below it.
  double diff_sq = 0, ref_sq = 0, underflow_sq = 0, excess_sq = 0;
  const double normal = stored ? smallest_normal(*stored) : 0;
  for (size_t i = 0; i < expected.data.size(); ++i) {
    const double x = actual.data[i], r = expected.data[i];
    double excess = std::abs(x - r);
    if (std::abs(r) < normal) {
      const double held = std::abs(round_value(r, *stored) - r);
      underflow_sq += held * held;
      excess = std::max(0.0, excess - held);
    }
    excess_sq += excess * excess;
    if (!std::isfinite(x)) {
      if (c.finite) c.first_non_finite = index_of(i, actual.shape);
      c.finite = false;
      ++c.non_finite;
    }
    diff_sq += (x - r) * (x - r);
    ref_sq += r * r;
    c.max_abs = std::max(c.max_abs, std::abs(x - r));
  }
  if (!c.finite) {
    c.rel_l2 = c.max_abs = std::numeric_limits<double>::quiet_NaN();
    return c;
  }
  // An all-zero expected tensor is judged on the absolute norm.
  c.rel_l2 = ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq);
  c.underflow = ref_sq > 0 ? std::sqrt(underflow_sq / ref_sq) : 0;
  c.passed = c.rel_l2 <= threshold ||
             (c.underflow > 0 && std::sqrt(excess_sq) <= threshold * std::sqrt(ref_sq));
  return c;
}

void keep_worst(tensor_check& worst, const tensor_check& c) {
  const bool first = worst.tensor.empty();
  worst.tensor = c.tensor;
  worst.threshold = c.threshold;
  worst.finite = (first || worst.finite) && c.finite;
  // NaN never passes and is kept as the worst value.
  if (first || !(c.rel_l2 <= worst.rel_l2)) worst.rel_l2 = c.finite ? c.rel_l2 : NAN;
  if (first || !(c.max_abs <= worst.max_abs)) worst.max_abs = c.finite ? c.max_abs : NAN;
  worst.underflow = first ? c.underflow : std::max(worst.underflow, c.underflow);
  worst.passed = (first || worst.passed) && c.passed;
}

}  // namespace glabench
