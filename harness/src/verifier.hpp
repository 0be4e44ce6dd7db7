// `glabench verify` for one (backend, fixture, dtype): run the backend on the
// fixture's inputs rounded to the dtype (h0 and dht to the backend's state dtype), compare
// every output and gradient with the fp64 result on those same rounded inputs, and — for
// an fp64 backward — check the backend's gradients against finite differences of its own
// forward. A packed batch (cu_seqlens) goes only to a backend that declares it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend_loader.hpp"
#include "case_status.hpp"
#include "dtype.hpp"
#include "fixture.hpp"
#include "glabench/reference/gradcheck.hpp"
#include "tensor_check.hpp"

namespace glabench {

struct verify_options {
  std::optional<double> tolerance;  // overrides the per-dtype default
  bool gradcheck = true;
  // The devices the backend is given (--devices; glabench_problem.device_ids): non-empty,
  // no repeats. A host backend runs when one is listed; with more its cases are
  // unsupported (skipped).
  std::vector<int32_t> devices{0};
};

struct verify_case_result {
  std::string backend;
  std::string fixture;  // name
  std::string fixture_path;
  op_kind op = op_kind::gla;
  dtype storage = dtype::fp64;
  // The dtype of h0, ht, dh0 and dht (gla, rwkv6): the storage dtype, or float32 for a
  // backend with ABI 1.5's GLABENCH_FEATURE_STATE_FP32 at 16-bit storage.
  std::optional<dtype> state_storage;
  case_status status = case_status::passed;
  std::string message;  // why it failed, was skipped or was unavailable; notes
  std::vector<tensor_check> checks;
  std::optional<reference::gradcheck_report> gradcheck;
  double seconds = 0;
  std::vector<int32_t> devices{0};  // what the backend was given (verify_options::devices)
};

verify_case_result verify_case(const loaded_backend& backend, const fixture& f, dtype storage,
                               const verify_options& opts);

// Exit code of a whole verify run (docs/design.md §5): cases_exit_code of its cases.
int verify_exit_code(const std::vector<verify_case_result>& results);

}  // namespace glabench
