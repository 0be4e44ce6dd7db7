// What a results file records about the run: glabench version and commit, build
// type, host, time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace glabench {

nlohmann::json run_context();

// Writes JSON to a temporary file beside `path`, then renames it into place.
void write_json_file(const std::string& path, const nlohmann::json& j);

}  // namespace glabench
