// The quick verify `glabench bench` runs before it times a configuration: the backend's
// outputs (and, for fwdbwd, gradients) on the very inputs that will be timed, checked
// on two sampled (batch, head) pairs — the first and the last — against the fp64
// reference on the same inputs rounded to the storage dtype. One head of a large
// problem costs the reference seconds where the whole problem would cost hours.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "bench_results.hpp"
#include "dtype.hpp"
#include "glabench/reference/problem.hpp"
#include "tensor_check.hpp"

namespace glabench {

struct head_index {
  int64_t b, h;
};

// The fp64 reference outputs (and gradients) of one sampled head.
struct expected_head {
  head_index at;
  op_outputs out;
  std::optional<op_gradients> grads;
};

// The reference on each sampled head of `in` rounded to d, the heads in parallel; with
// gradients when asked (from in.d_o and in.dht).
std::vector<expected_head> reference_heads(const problem& p, const op_inputs& in, dtype d,
                                           bool with_backward);

// One sampled head's results from the backend, shaped with B = H = 1.
struct head_result {
  op_outputs out;
  std::optional<op_gradients> grads;  // fwdbwd only
};

// The worst rel_l2 per tensor over the sampled heads, each against the dtype's
// tolerance; `fetch` brings one head's results back from the backend. rwkv6's du sums
// over the batch, so one head's reference du is not the backend's; the fixture verify
// checks du.
std::vector<tensor_check> check_heads(const problem& p, bool has_h0,
                                       const std::vector<expected_head>& want, double tol,
                                       const std::function<head_result(head_index)>& fetch);

}  // namespace glabench
