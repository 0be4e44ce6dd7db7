#include "backend_build.hpp"

#include <fmt/format.h>

#include "backend_loader.hpp"
#include "json_fields.hpp"
#include "safe_text.hpp"

namespace glabench {

std::string backend_build::summary() const {
  const std::string git = git_commit ? ", git " + *git_commit : "";
  if (!described) return fmt::format("not described (ABI {}){}", abi, git);
  std::string s = build_type.empty() ? "no build type" : build_type;
  s += ", " + compiler + (optimized ? ", optimised" : ", NOT OPTIMISED");
  if (!cuda_architectures.empty()) s += ", CUDA " + cuda_architectures;
  return s + git;
}

backend_build build_of(const glabench_backend& t) {
  backend_build b;
  b.abi = fmt::format("{}.{}", t.abi_major, t.abi_minor);
  if (!GLABENCH_HAS_MEMBER(&t, glabench_backend, build) || !t.build.compiler) return b;
  b.described = true;
  b.optimized = t.build.optimized != 0;
  b.compiler = t.build.compiler;
  b.build_type = t.build.build_type ? t.build.build_type : "";
  b.cuda_architectures = t.build.cuda_architectures ? t.build.cuda_architectures : "";
  return b;
}

nlohmann::json to_json(const backend_build& b) {
  return to_json_by(b, backend_build_fields);
}

backend_build backend_build_from_json(const nlohmann::json& j) {
  return from_json_by<backend_build>(j, backend_build_fields);
}

nlohmann::json backend_builds(const std::vector<const loaded_backend*>& backends) {
  nlohmann::json out = nlohmann::json::object();
  for (const loaded_backend* b : backends) {
    nlohmann::json build = to_json(b->build);
    build["version"] = json_safe(b->table->version);
    out[b->name()] = std::move(build);
  }
  return out;
}

std::string unoptimised_warning(const std::string& backend, const backend_build& b) {
  if (!b.unoptimised()) return "";
  return fmt::format(
      "backend '{}' was built WITHOUT OPTIMISATION ({}): its times can be many times what an "
      "optimised build gives; rebuild it with optimisation (CMAKE_BUILD_TYPE=Release, or "
      "glabench_add_backend without a build type) before trusting them",
      backend, b.summary());
}

}  // namespace glabench
