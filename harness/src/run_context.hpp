// What a results file records about the run: glabench version and commit, build
// type, host, time, and the backends' environment knobs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace glabench {

// backend_names: the backends of the run. A backend's own knobs are environment
// variables named after it, in capitals (parallel_scan_cuda: PARALLEL_SCAN_CUDA_*); those
// set for the run are recorded as context.backend_environment, so that two results files
// taken with different knobs cannot pass for the same configuration.
nlohmann::json run_context(const std::vector<std::string>& backend_names = {});

// The environment variables named <BACKEND>_… for the given backend names, as an object.
nlohmann::json backend_environment(const std::vector<std::string>& backend_names);

// Writes JSON to a temporary file beside `path`, then renames it into place.
void write_json_file(const std::string& path, const nlohmann::json& j);

}  // namespace glabench
