// The one check record: the accuracy of one output tensor against its fp64 expected
// value (docs/design.md §5), rel_l2 = ‖x − r‖₂ / ‖r‖₂ and max_abs = max |x − r|, against
// a threshold on rel_l2. NaN or Inf never passes. Where the output's dtype is given, what
// it cannot hold is credited, element by element: below the dtype's smallest normal a value
// is held only to an absolute step (fp16: 2^-24; a gradient of 1e-13 becomes 0), so there
// an element's error counts only beyond |round(r) − r|; the tensor also passes when those
// excesses, with the normal range's errors whole, have a norm ≤ threshold·‖r‖. `glabench verify`
// keeps one per tensor of a fixture; `glabench bench`'s quick verify one per tensor, the worst over
// the sampled heads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "glabench/reference/tensor.hpp"

namespace glabench {

struct tensor_check {
  std::string tensor;  // "o", "ht", "dq", …
  double rel_l2 = 0;   // NaN when the output is not finite
  double threshold = 0;
  bool passed = false;
  double max_abs = 0;  // NaN when the output is not finite
  bool finite = true;
  // ‖round(r) − r‖ / ‖r‖ over the elements of r below the output dtype's smallest normal:
  // the error a result rounded exactly into that dtype has there (0 without a dtype).
  double underflow = 0;
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
                            double threshold, std::optional<dtype> stored = std::nullopt);

// The dtypes a backend's outputs come back in: ht and dh0 in the state dtype, lse in fp32
// at 16-bit storage, every other tensor in the storage dtype.
struct output_dtypes {
  dtype storage, state;
  dtype of(const std::string& tensor) const {
    if (tensor == "ht" || tensor == "dh0") return state;
    if (tensor == "lse" && is_16_bit(storage)) return dtype::fp32;
    return storage;
  }
};

// Folds `c` into `worst`, the same tensor's check over other heads or runs: the larger
// rel_l2 and max_abs (NaN is kept as the worst), passed only if both passed. `worst`
// may be default-constructed (no check yet).
void keep_worst(tensor_check& worst, const tensor_check& c);

}  // namespace glabench
