// How a backend plugin was built (backend.h's glabench_build_info, ABI 1.1;
// docs/design.md §3): read from its table once, carried from a worker to the parent,
// recorded per backend in results files (context.backend_builds, with its version), shown by
// `glabench list`, and warned about by `glabench bench` when a timed backend was built without
// optimisation. Strings are the plugin's own: escape them where printed (safe_text.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "glabench/backend.h"

namespace glabench {

struct loaded_backend;

struct backend_build {
  // false: the table predates ABI 1.1 (no build member) or leaves build.compiler NULL;
  // nothing below is known then.
  bool described = false;
  bool optimized = false;
  std::string compiler, build_type, cuda_architectures;
  std::string abi;  // "1.1": the ABI version the table declares
  // The commit the plugin was built from (backend.h's GLABENCH_GIT_COMMIT_SYMBOL, which
  // glabench_add_backend exports), json_safe; none where the plugin exports no such symbol.
  std::optional<std::string> git_commit;

  // "Release, GNU 12.2.0, optimised, CUDA 90 80, git 873c3a09af71"; "not described (ABI
  // 1.0)".
  std::string summary() const;
  // Built without optimisation, by its own account.
  bool unoptimised() const { return described && !optimized; }
};

// What the table says (GLABENCH_HAS_MEMBER decides whether it says anything).
backend_build build_of(const glabench_backend& table);

// Its JSON, described once (json_fields.hpp) for the worker's reply and the results file
// that write it and the parent and `glabench report` that read it back:
// {"described": true, "optimized": true, "compiler": …, "build_type": …,
//  "cuda_architectures": …, "abi": "1.1", "git_commit": …}; {"described": false, "abi":
//  "1.0"} (git_commit only where the plugin exports it).
inline constexpr auto backend_build_fields = [](auto& f, auto& b) {
  f("described", b.described);
  f("abi", b.abi);
  f.present_if(b.described, "optimized", b.optimized);
  f.present_if(b.described, "compiler", b.compiler);
  f.present_if(b.described, "build_type", b.build_type);
  f.present_if(b.described, "cuda_architectures", b.cuda_architectures);
  f("git_commit", b.git_commit);
};
nlohmann::json to_json(const backend_build& b);
backend_build backend_build_from_json(const nlohmann::json& j);

// context.backend_builds of a results file: backend name → to_json(its build) and
// "version", the table's version string (json_safe): which library a peer is, and the
// settings it reports (the Python bridge's: the interpreter, torch, fla-core, autotuning).
nlohmann::json backend_builds(const std::vector<const loaded_backend*>& backends);

// The warning for a backend whose times were taken from a build without optimisation;
// "" unless b.unoptimised().
std::string unoptimised_warning(const std::string& backend, const backend_build& b);

}  // namespace glabench
