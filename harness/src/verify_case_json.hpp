// One verify case as JSON, both ways: the entries of `glabench verify --json`'s
// "results" array, and how a worker hands a case's result to the parent.
#pragma once

#include <nlohmann/json.hpp>

#include "verifier.hpp"

namespace glabench {

nlohmann::json to_json(const verify_case_result& r);
// Throws std::runtime_error naming the field when `j` is not such an entry.
verify_case_result verify_case_from_json(const nlohmann::json& j);

}  // namespace glabench
