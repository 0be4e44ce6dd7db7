// The one check record: the accuracy of one output tensor against its fp64 expected
// value (docs/design.md §5), rel_l2 = ‖x − r‖₂ / ‖r‖₂ and max_abs = max |x − r|, against
// a threshold on rel_l2. NaN or Inf never passes. `glabench verify` keeps one per tensor
// of a fixture; `glabench bench`'s quick verify one per tensor, the worst over the
// sampled heads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "glabench/reference/tensor.hpp"

namespace glabench {

struct tensor_check {
  std::string tensor;  // "o", "ht", "dq", …
  double rel_l2 = 0;   // NaN when the output is not finite
  double threshold = 0;
  bool passed = false;
  double max_abs = 0;  // NaN when the output is not finite
  bool finite = true;
  // Where the output is not finite: how many elements are NaN or ±Inf, and the index of
  // the first in row-major order ([b, t, h, d] for token tensors). Not kept by
  // keep_worst (bench's sampled heads have no whole-tensor index).
  int64_t non_finite = 0, elements = 0;
  std::vector<int64_t> first_non_finite = {};
};

// "o", or for an output that is not finite "o (3 of 4096 NaN or Inf, the first at
// [0, 5, 1, 3])": a failed check as a failure line names it.
std::string describe_failure(const tensor_check& c);

tensor_check compare_tensor(const std::string& name, const tensor& actual, const tensor& expected,
                            double threshold);

// Folds `c` into `worst`, the same tensor's check over other heads or runs: the larger
// rel_l2 and max_abs (NaN is kept as the worst), passed only if both passed. `worst`
// may be default-constructed (no check yet).
void keep_worst(tensor_check& worst, const tensor_check& c);

}  // namespace glabench
