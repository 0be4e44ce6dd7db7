#include "glabench/reference/tensor.hpp"

#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>

namespace glabench {

tensor::tensor(std::vector<int64_t> shape_, double fill) : shape(std::move(shape_)) {
  const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  data.assign(static_cast<size_t>(n), fill);
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

double dot(const tensor& a, const tensor& b) {
  if (a.data.size() != b.data.size()) throw std::invalid_argument("dot: size mismatch");
  double sum = 0;
  for (size_t i = 0; i < a.data.size(); ++i) sum += a.data[i] * b.data[i];
  return sum;
}

double l2_norm(const tensor& a) {
  return std::sqrt(dot(a, a));
}

}  // namespace glabench
