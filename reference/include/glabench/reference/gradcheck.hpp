// Finite-difference gradient checks (docs/design.md §5), modelled on torch.autograd.gradcheck's
// fast mode: compare the directional derivative vᵀJu, from central differences of a
// forward function, with <backward(v), u>.
//
// Step choice. A central difference D(h) = (L(x+hu) − L(x−hu)) / 2h has truncation
// error c·h² and rounding error ≈ ε·|L|/h (ε = 2.2e-16). We combine two steps by
// Richardson extrapolation, R = (4·D(h/2) − D(h)) / 3, which cancels the h² term and
// leaves O(h⁴). With inputs of order one and h = 1e-3, truncation is ≈ 1e-12 and
// rounding ≈ 4e-13·|L| relative — both far below the 1e-8 tolerance, which in turn is
// far below any real gradient bug (those show up at 1e-3 or worse).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "glabench/reference/ops.hpp"

namespace glabench::reference {

// A differentiable op as the checker sees it: the reference itself, or a backend
// driven through the plugin ABI.
struct differentiable_op {
  std::function<op_outputs(const op_inputs&)> forward;
  // Reads in.d_o and in.dht as the cotangents of o and ht.
  std::function<op_gradients(const op_inputs&)> backward;
};

struct gradcheck_options {
  int directions = 4;                    // random (u, v) pairs per input, plus one joint
  double step = 1e-3;                    // h, relative to inputs of order one
  double tolerance = 1e-8;               // on directional_result::error and the Jacobian's
  int64_t max_jacobian_elements = 4096;  // full Jacobian when inputs×outputs ≤ this
  uint64_t seed = 12345;
};

struct directional_result {
  std::string input;  // "q", …, or "all"
  double finite_difference = 0;
  double analytic = 0;
  // |fd − analytic| / max(‖grad‖₂ of the inputs the direction touches,
  //                       1e-4 · ‖grad‖₂ of all inputs)
  double error = 0;
};

struct gradcheck_report {
  std::vector<directional_result> directional;
  bool jacobian_checked = false;
  double jacobian_error = 0;  // max |J_fd − J_analytic| / max |J_analytic|
  double worst_error = 0;
  double tolerance = 0;  // the options' tolerance it was judged against
  bool passed = false;
};

// `in` supplies the point x (q, k, v, g, u, h0 as present); its cotangents are ignored
// and replaced by random ones. ht gets a cotangent too, so dht handling is checked.
// A packed batch (p.cu_seqlens) is checked as it is: ht and h0 are [N,H,K,V].
gradcheck_report gradcheck(const problem& p, const op_inputs& in, const differentiable_op& op,
                           const gradcheck_options& opts = {});

// The reference's own op, for checking the oracle itself.
differentiable_op reference_op(const problem& p, formulation f);

}  // namespace glabench::reference
