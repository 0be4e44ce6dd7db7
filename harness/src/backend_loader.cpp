#include "backend_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "abi_vocabulary.hpp"
#include "glabench/backend_support.hpp"

namespace glabench {
namespace fs = std::filesystem;
namespace {

// The table size each minor version of ABI major 1 promises.
size_t table_size_for_minor(uint32_t minor) {
  (void)minor;  // minor 0 is the only one so far; later minors append members
  return offsetof(glabench_backend, backward) + sizeof(glabench_backend::backward);
}

bool is_elf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  return f.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

void validate_table(const std::string& path, const glabench_backend* t) {
  auto refuse = [&](const std::string& why) { throw backend_load_error(path + ": " + why); };
  if (t->abi_major != GLABENCH_ABI_MAJOR)
    refuse("ABI major version " + std::to_string(t->abi_major) +
           ", but this glabench speaks ABI major " + std::to_string(GLABENCH_ABI_MAJOR) +
           " (rebuild the backend against this glabench's backend.h)");
  const size_t promised = table_size_for_minor(t->abi_minor);
  if (t->struct_size < promised)
    refuse("table struct_size " + std::to_string(t->struct_size) + " is shorter than the " +
           std::to_string(promised) + " bytes ABI " + std::to_string(t->abi_major) + "." +
           std::to_string(t->abi_minor) + " promises");
  if (!t->name || !*t->name) refuse("the table has no name");
  if (!t->version) refuse("backend '" + std::string(t->name) + "' has no version string");
  if (t->device_type != kDLCPU && t->device_type != kDLCUDA)
    refuse("backend '" + std::string(t->name) + "' declares device type " +
           std::to_string(t->device_type) + "; only CPU and CUDA are supported");
  if (!t->device_available || !t->supports || !t->workspace_size || !t->forward)
    refuse(
        "backend '" + std::string(t->name) +
        "' leaves a required function (device_available, supports, workspace_size, forward) NULL");
  if (t->num_capabilities > 0 && !t->capabilities)
    refuse("backend '" + std::string(t->name) + "' declares capabilities but gives no table");
  for (size_t i = 0; i < t->num_capabilities; ++i)
    if (t->capabilities[i].mode == GLABENCH_MODE_BACKWARD && !t->backward)
      refuse("backend '" + std::string(t->name) +
             "' declares a backward capability but backward is NULL");
}

}  // namespace

loaded_backend load_backend(const std::string& path) {
  if (!fs::is_regular_file(path)) throw backend_load_error(path + ": no such file");
  if (!is_elf(path)) throw backend_load_error(path + ": not a shared library (no ELF header)");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw backend_load_error(path + ": cannot be loaded: " + dlerror());
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  dlerror();
  auto entry = reinterpret_cast<glabench_backend_entry_fn>(dlsym(handle, GLABENCH_ENTRY_SYMBOL));
  if (!entry)
    throw backend_load_error(path + ": no entry symbol '" GLABENCH_ENTRY_SYMBOL
                                    "' (is it a glabench backend?)");
  const glabench_backend* table = entry();
  if (!table) throw backend_load_error(path + ": " GLABENCH_ENTRY_SYMBOL "() returned NULL");
  validate_table(path, table);
  return {path, table, std::move(library)};
}

bool loaded_backend::supports(op_kind op, dtype d, glabench_mode mode) const {
  return backend_support::has_capability(*table, to_abi(op), to_dlpack(d), mode);
}

std::vector<dtype> loaded_backend::forward_dtypes(op_kind op) const {
  std::vector<dtype> out;
  for (dtype d : kAllDtypes)
    if (supports(op, d, GLABENCH_MODE_FORWARD)) out.push_back(d);
  return out;
}

bool looks_like_backend_file(const std::string& filename) {
  return filename.starts_with("glabench_backend_") && filename.ends_with(".so");
}

const loaded_backend* backend_registry::find(const std::string& name) const {
  for (const auto& b : backends)
    if (b.name() == name) return &b;
  return nullptr;
}

std::string backend_registry::names() const {
  std::string s;
  for (const auto& b : backends) s += (s.empty() ? "" : ", ") + b.name();
  return s.empty() ? "(none)" : s;
}

backend_registry discover_backends(const std::string& default_dir,
                                   const std::vector<std::string>& explicit_libs) {
  std::vector<std::string> dirs;
  if (!default_dir.empty()) dirs.push_back(default_dir);
  if (const char* env = std::getenv("GLABENCH_BACKEND_PATH")) {
    std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) dirs.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }

  backend_registry reg;
  std::set<std::string> seen_paths;
  auto add = [&](loaded_backend b) {
    if (const loaded_backend* other = reg.find(b.name()))
      throw backend_load_error("two backends are named '" + b.name() + "': " + other->path +
                               " and " + b.path);
    reg.backends.push_back(std::move(b));
  };
  auto canonical = [](const std::string& p) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(p, ec);
    return ec ? p : c.string();
  };

  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (looks_like_backend_file(entry.path().filename().string()))
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!seen_paths.insert(canonical(file)).second) continue;
      std::optional<loaded_backend> backend;
      try {
        backend = load_backend(file);
      } catch (const backend_load_error& e) {
        reg.broken.push_back(e.what());
        continue;
      }
      add(std::move(*backend));
    }
  }
  for (const auto& lib : explicit_libs) {
    if (!seen_paths.insert(canonical(lib)).second) continue;
    add(load_backend(lib));
  }
  return reg;
}

}  // namespace glabench
