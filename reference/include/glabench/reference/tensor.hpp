// A dense, row-major fp64 host tensor: the one currency of the reference, the fixtures
// and the harness on the host side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glabench {

struct tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  tensor() = default;
  explicit tensor(std::vector<int64_t> shape_, double fill = 0.0);

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  bool empty() const { return data.empty() && shape.empty(); }
  double* ptr() { return data.data(); }
  const double* ptr() const { return data.data(); }
};

// "[2, 16, 4, 8]"
std::string shape_string(const std::vector<int64_t>& shape);

// Σ a_i b_i over two tensors of the same size.
double dot(const tensor& a, const tensor& b);
double l2_norm(const tensor& a);

}  // namespace glabench
