// One decode-drift case as JSON, both ways: the entries of `glabench decode-drift
// --json`'s "results" array, and how a worker hands a case's result to the parent. The
// options a worker runs a case with cross by the description in worker_protocol.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include "decode_drift.hpp"

namespace glabench {

nlohmann::json to_json(const decode_drift_result& r);
// Throws std::runtime_error naming the field when `j` is not such an entry.
decode_drift_result decode_drift_from_json(const nlohmann::json& j);

}  // namespace glabench
