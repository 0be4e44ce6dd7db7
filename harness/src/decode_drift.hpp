// The chained-decode drift check (`glabench decode-drift`, docs/design.md §5): a backend
// decodes `steps` tokens one forward call at a time (T = 1), as a server does, each call's
// h0 the previous call's ht exactly as the backend returned it (in its state dtype: fp32
// for a backend with GLABENCH_FEATURE_STATE_FP32 at 16-bit storage), never re-rounded by
// the harness. The fp64 oracle runs the same chain on the same rounded inputs from the same
// rounded h0, its state carried in fp64. After every step the step's o and the state (ht)
// are compared with the oracle's (rel_l2, tensor_check.hpp): the error the chain has
// accumulated. One verify case checks one call; this checks what a thousand calls make of
// the state's rounding.
//
// The inputs: B sequences of H heads, drawn as one problem of T = steps tokens
// (make_random_inputs: seed, a gate regime of gate_regime.hpp, h0 random) whose token t is
// step t's input; q, k, v, g and u rounded to the storage dtype, h0 to the state dtype.
//
// A case passes when every step ran and the largest rel_l2 of o and of the state over all
// steps is within the threshold (the dtype's verify threshold unless given). A NaN or Inf
// in o or ht ends the chain there: failed, naming the step. Runs in a worker like a verify
// case (isolation.hpp): a crash or hang costs the case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend_loader.hpp"
#include "case_status.hpp"
#include "dtype.hpp"

namespace glabench {

struct decode_drift_options {
  int64_t B = 4, H = 4, K = 64, V = 64;  // the problem each step solves, at T = 1
  int64_t steps = 1024;                  // forward calls chained
  uint64_t seed = 20261122;              // of the inputs (make_random_inputs)
  // On the largest rel_l2 over the steps, of o and of the state; default: the storage
  // dtype's verify threshold (default_tolerance).
  std::optional<double> tolerance;
  // The devices the backend is given (--devices), as in verify.
  std::vector<int32_t> devices{0};
};

// The steps whose drift a result keeps: 1, 4, 16, 64, … (powers of 4) up to `steps`, and
// `steps` itself.
std::vector<int64_t> drift_checkpoints(int64_t steps);

// The drift after `step` calls (1-based): rel_l2 of that step's o and of its ht against
// the fp64 chain's; NaN where the backend's is not finite.
struct drift_point {
  int64_t step = 0;
  double o_rel_l2 = 0;
  double state_rel_l2 = 0;
};

struct decode_drift_result {
  std::string backend;
  op_kind op = op_kind::gla;
  dtype storage = dtype::fp64;
  dtype state_storage = dtype::fp64;  // of h0 and ht (loaded_backend::state_dtype)
  std::string gates;                  // the gate regime's name
  case_status status = case_status::passed;
  std::string message;                   // why it failed or did not run
  int64_t steps = 0;                     // asked for
  int64_t steps_run = 0;                 // completed: all of them unless a failure ended the chain
  double threshold = 0;                  // on max_o_rel_l2 and max_state_rel_l2
  std::vector<drift_point> checkpoints;  // at drift_checkpoints(steps), those run
  // The largest rel_l2 over every step run, and the step it came at (0: none ran).
  double max_o_rel_l2 = 0, max_state_rel_l2 = 0;
  int64_t max_o_step = 0, max_state_step = 0;
  double seconds = 0;
  std::vector<int32_t> devices{0};
};

// A case's result before anything ran: what it is (backend, op, dtypes, regime, steps,
// limit, devices), passed, no checkpoints.
decode_drift_result decode_drift_case(const loaded_backend& backend, op_kind op, dtype storage,
                                      const std::string& gates, const decode_drift_options& opts);

// One case: `backend` at `storage` on `op` (gla or rwkv6), the gates drawn from the regime
// named `gates`. Never throws for what the backend does: a refusal before any call is
// unsupported or unavailable, an error or a NaN failed.
decode_drift_result run_decode_drift(const loaded_backend& backend, op_kind op, dtype storage,
                                     const std::string& gates, const decode_drift_options& opts);

}  // namespace glabench
