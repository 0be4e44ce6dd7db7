// Accuracy of one output tensor against its fp64 expected value (docs/design.md §5):
// rel_l2 = ‖x − r‖₂ / ‖r‖₂ and max_abs = max |x − r|. NaN or Inf never passes.
#pragma once

#include <string>

#include "glabench/reference/tensor.hpp"

namespace glabench {

struct tensor_check {
  std::string name;
  double rel_l2 = 0;
  double max_abs = 0;
  double threshold = 0;
  bool finite = true;
  bool passed = false;
};

tensor_check compare_tensor(const std::string& name, const tensor& actual, const tensor& expected,
                            double threshold);

}  // namespace glabench
