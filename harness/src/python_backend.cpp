#include "python_backend.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "backend_loader.hpp"

namespace glabench {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = "python:";
constexpr const char* kBridgeFile = "glabench_python_bridge.so";

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

bool valid_spec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) return false;
  for (const char c : spec)
    if (c == '#' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

std::string executable_folder() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.parent_path().string();
}

}  // namespace

std::string make_python_locator(const std::string& name_eq_spec, const std::string& bridge) {
  const size_t eq = name_eq_spec.find('=');
  const std::string name = eq == std::string::npos ? "" : name_eq_spec.substr(0, eq);
  const std::string spec = eq == std::string::npos ? "" : name_eq_spec.substr(eq + 1);
  if (!valid_name(name))
    throw std::invalid_argument("--python '" + name_eq_spec +
                                "': NAME=SPEC needs a NAME of 1 to 64 letters, digits, '_', "
                                "'.' or '-' (e.g. --python mine=my_kernels:gla)");
  if (!valid_spec(spec))
    throw std::invalid_argument("--python '" + name_eq_spec +
                                "': SPEC must be MODULE:FUNCTION or FILE.py:FUNCTION, "
                                "without '#' or control characters");
  // A file is named by its absolute path: the worker may run elsewhere (and a kernel may
  // chdir) before the bridge imports it.
  const size_t colon = spec.rfind(':');
  const std::string where = spec.substr(0, colon);
  std::string resolved = spec;
  if (where.ends_with(".py") || where.find('/') != std::string::npos) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(where, ec);
    const std::string path = absolute.lexically_normal().string();
    if (!ec && path.find('#') == std::string::npos) resolved = path + spec.substr(colon);
  }
  return kPrefix + bridge + "#" + name + "=" + resolved;
}

std::optional<python_locator> parse_python_locator(const std::string& path) {
  if (!path.starts_with(kPrefix)) return std::nullopt;
  const size_t hash = path.rfind('#');
  const size_t eq = hash == std::string::npos ? hash : path.find('=', hash);
  if (hash == std::string::npos || eq == std::string::npos) return std::nullopt;
  const size_t start = std::string(kPrefix).size();
  return python_locator{path.substr(start, hash - start), path.substr(hash + 1, eq - hash - 1),
                        path.substr(eq + 1)};
}

std::string library_file(const std::string& path) {
  const auto py = parse_python_locator(path);
  return py ? py->bridge : path;
}

std::string find_python_bridge(const std::string& default_dir) {
  if (const char* chosen = std::getenv("GLABENCH_PYTHON_BRIDGE"); chosen && *chosen) {
    if (!fs::is_regular_file(chosen))
      throw std::invalid_argument(std::string("GLABENCH_PYTHON_BRIDGE=") + chosen +
                                  ": no such file");
    std::error_code ec;
    const fs::path absolute = fs::absolute(chosen, ec);
    return ec ? std::string(chosen) : absolute.string();
  }
  std::vector<std::string> folders;
  if (!default_dir.empty()) folders.push_back(default_dir);
  if (const std::string exe = executable_folder(); !exe.empty())
    folders.push_back(exe + "/../lib/glabench/backends");
  for (auto& folder : backend_path_folders()) folders.push_back(std::move(folder));
  for (const auto& folder : folders) {
    std::error_code ec;
    const fs::path candidate = fs::path(folder) / kBridgeFile;
    if (fs::is_regular_file(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  throw std::invalid_argument(std::string("--python: no ") + kBridgeFile +
                              " in the build's backend folder, lib/glabench/backends or "
                              "GLABENCH_BACKEND_PATH (build backends/python_bridge, or set "
                              "GLABENCH_PYTHON_BRIDGE)");
}

}  // namespace glabench
