// Finding and loading backend plugins (docs/design.md §3). Backends are found in the build's
// backend folder, in the folders of GLABENCH_BACKEND_PATH (':'-separated), and as
// explicit --backend-lib paths; a Python backend's path is a locator of the bridge
// (python_backend.hpp), which load_backend loads with the callable it is to host. The loader
// refuses, with a message naming the file: a file that is not a shared library, one without the
// entry symbol, an entry that returns NULL, a major ABI mismatch, a table shorter than its version
// promises, a table with missing members, a capability with an unknown op or mode, a knob not named
// after the backend, and two backends with the same name. A backend runs its
// code inside glabench, so, like ssh's StrictModes, the loader also refuses a plugin file or
// folder that someone other than the current user or root could change (owned by another
// user, writable by others, or writable by a group other than the owner's private group;
// a sticky folder such as /tmp may be writable by others): see backend_loader.cpp.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_build.hpp"
#include "dtype.hpp"
#include "glabench/backend.h"
#include "glabench/reference/problem.hpp"

namespace glabench {

class backend_load_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct loaded_backend {
  std::string path;
  const glabench_backend* table = nullptr;
  std::shared_ptr<void> library;  // dlclose on last release
  backend_build build;            // how the plugin was built, as its table says
  // The environment variables the table names as its knobs (ABI 1.4), the only ones
  // results record (run_context.hpp); validated by the loader.
  std::vector<std::string> knobs;

  std::string name() const { return table->name; }
  // Whether the capability table lists (op, dtype, mode): the harness's one capability
  // lookup. The backend's supports() may still refuse a particular problem.
  bool supports(op_kind op, dtype d, glabench_mode mode) const;
  // The dtypes it has a forward of `op` in, in kAllDtypes order.
  std::vector<dtype> forward_dtypes(op_kind op) const;
  // The GLABENCH_FEATURE_* bits its table declares (ABI 1.5); 0 for a table of an earlier
  // minor, read only where its struct_size holds the member.
  uint32_t features() const;
  // The dtype its states (h0, ht, dh0, dht) take at a storage dtype: float32 where the
  // storage is 16-bit and it declares GLABENCH_FEATURE_STATE_FP32, else the storage dtype.
  dtype state_dtype(dtype storage) const;
  // Why problem `p` is not offered to it at all, whatever the dtype: a packed
  // variable-length batch to a backend without GLABENCH_FEATURE_VARLEN. "" when it is.
  std::string not_offered(const problem& p) const;
};

// How a file becomes a loaded_backend: load_backend in this process, or a description
// made by a worker process (isolation.hpp), so that the parent never runs plugin code.
using backend_loader_fn = std::function<loaded_backend(const std::string& path)>;

// Loads one file; throws backend_load_error.
loaded_backend load_backend(const std::string& path);

struct backend_registry {
  std::vector<loaded_backend> backends;
  // Files in the searched folders that failed to load, and searched folders refused for
  // their permissions: "path: reason". Not fatal, but `glabench list` shows them.
  std::vector<std::string> broken;

  const loaded_backend* find(const std::string& name) const;
  std::string names() const;  // "a, b, c"
};

// The folders of GLABENCH_BACKEND_PATH (':'-separated, empty entries skipped), in order.
std::vector<std::string> backend_path_folders();

// File names a folder scan considers: glabench_backend_<name>.so
bool looks_like_backend_file(const std::string& filename);

// Searches the default folder (unless empty), GLABENCH_BACKEND_PATH and the explicit
// libraries (each through `load`). An explicit library that fails to load, and a
// duplicate name anywhere, throw backend_load_error.
backend_registry discover_backends(const std::string& default_dir,
                                   const std::vector<std::string>& explicit_libs,
                                   const backend_loader_fn& load = load_backend);

}  // namespace glabench
