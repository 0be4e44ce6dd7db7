// What a results file records about the run: glabench version and commit, build
// type, host, time, and the backends' environment knobs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend_loader.hpp"

namespace glabench {

// backends: the backends of the run. A backend's knobs are the environment variables its
// table names (ABI 1.4, loaded_backend::knobs; e.g. PARALLEL_SCAN_CUDA_FP32_STATE); those
// set for the run are recorded as context.backend_environment, so that two results files
// taken with different knobs cannot pass for the same configuration.
nlohmann::json run_context(const std::vector<const loaded_backend*>& backends = {});

// The variables among `knobs` that are set, as an object of name → value. An allow-list:
// exactly these names, never a variable that merely begins like one (matched by a prefix,
// a backend named aws would have its results carry AWS_SECRET_ACCESS_KEY).
nlohmann::json backend_environment(const std::vector<std::string>& knobs);

// Output files and folders. A command checks every output path before it starts any
// work, so a typo costs no run; results then appear whole or not at all.

// Throws std::invalid_argument ("<what> <path>: <rule>") unless `path` can be written:
// it names a file (not a folder) in a folder that exists (glabench creates no folders)
// and in which a file can be created; an existing file there is replaced (a symbolic
// link there is replaced, not followed). `what` is the option, e.g. "--json".
void check_output_path(const std::string& path, const std::string& what);

// Writes JSON to `path`: every string passes through json_safe (safe_text.hpp), the text
// goes to a fresh temporary file created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, random
// name ".<name>.tmp-<16 hex digits>") in the target's folder, is fsynced, and is renamed
// into place. On any failure the temporary file is removed and std::runtime_error names
// the path; an existing file at `path` is then left as it was.
void write_json_file(const std::string& path, const nlohmann::json& j);
// The same for text made elsewhere (e.g. JSON written row by row), written as it is.
void write_text_file(const std::string& path, const std::string& text);

// A report folder (glabench report --out DIR). DIR may be absent, an empty folder, or a
// glabench report folder — report.md and plots.json with nothing else but regular *.png
// files — which is replaced as a whole. Anything else (a file, a symbolic link, a folder
// holding other entries) is refused. Returns "" when DIR may be written, else the reason.
std::string report_dir_refusal(const std::string& dir);

// Throws std::invalid_argument ("<what> <dir>: <rule>") unless `dir` may be written: its
// parent folder exists and a folder can be created in it, and report_dir_refusal is "".
void check_report_dir(const std::string& dir, const std::string& what);

// A folder built beside its target and moved into place by one rename. The constructor
// creates ".<name>.tmp-XXXXXX" with mkdtemp in the target's parent folder; publish()
// renames it to the target (an existing report folder is swapped out with
// renameat2(RENAME_EXCHANGE) where the file system has it, else moved aside first, and
// then deleted). Unless published, the destructor deletes the staging folder.
class staged_dir {
 public:
  explicit staged_dir(const std::string& target);
  ~staged_dir();
  staged_dir(const staged_dir&) = delete;
  staged_dir& operator=(const staged_dir&) = delete;

  const std::string& path() const { return path_; }
  void publish();

 private:
  std::string target_, path_;
  bool published_ = false;
};

}  // namespace glabench
