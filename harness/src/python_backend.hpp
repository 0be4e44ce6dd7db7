// Python callables as backends (docs/python.md). `glabench --python NAME=SPEC` names a
// callable ("package.module:function" or "path/to/file.py:function") that the bridge
// plugin (backends/python_bridge) hosts. Such a backend's path is a locator,
// "python:<bridge library>#NAME=SPEC": unique per callable, so each gets a worker process
// of its own, and load_backend (backend_loader.hpp) loads the bridge with NAME=SPEC.
#pragma once

#include <optional>
#include <string>

namespace glabench {

struct python_locator {
  std::string bridge;  // the bridge library's path
  std::string name;    // the backend's name
  std::string spec;    // what the bridge imports
};

// The locator of `--python NAME=SPEC` hosted by `bridge`; throws std::invalid_argument
// naming --python and the rule NAME or SPEC breaks.
std::string make_python_locator(const std::string& name_eq_spec, const std::string& bridge);

// The parts of a locator; nullopt for an ordinary plugin path.
std::optional<python_locator> parse_python_locator(const std::string& path);

// The file a backend path loads: the bridge for a locator, else the path itself.
std::string library_file(const std::string& path);

// The bridge library: $GLABENCH_PYTHON_BRIDGE, else glabench_python_bridge.so in
// `default_dir`, in the installed SDK's lib/glabench/backends beside this executable, or
// in a folder of GLABENCH_BACKEND_PATH. Throws std::invalid_argument when there is none.
std::string find_python_bridge(const std::string& default_dir);

}  // namespace glabench
