// Backends run isolated: every call into a plugin happens in a worker process
// (worker_process.hpp), one per backend, so that a backend that crashes, exits, aborts,
// throws through the C boundary or hangs costs only its own case. The parent describes
// plugins through a worker too and never loads one itself. A worker that dies or is
// killed is replaced by a fresh one for the next case.
//
// Timing happens inside the worker exactly as in one process (bench_worker runs the same
// session code); the only addition in a timed call is call_watch's two stores.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "backend_loader.hpp"
#include "bench_results.hpp"
#include "fixture.hpp"
#include "verifier.hpp"
#include "worker_process.hpp"

namespace glabench {

struct isolation_options {
  // A backend call running longer than this gets its worker killed (--call-timeout).
  double call_timeout_s = 600;
};

class backend_isolation {
 public:
  explicit backend_isolation(isolation_options opts) : opts_(opts) {}

  // The backend at `path` as a worker loaded it: its table's name, version, device and
  // capabilities (no functions: they only run in workers). Throws backend_load_error
  // when it fails to load or kills the worker that tried.
  loaded_backend describe(const std::string& path);
  // What the backend's device_available() said in the worker that described it
  // ("available" or "unavailable: …").
  std::string availability(const std::string& path) const;

  verify_case_result verify(const loaded_backend& backend, const fixture& f, dtype storage,
                            const verify_options& opts);
  // One bench configuration (a bench_worker request); a backend call is also stopped
  // past `call_limit_s`.
  bench_row bench(const loaded_backend& backend, const nlohmann::json& request,
                  double call_limit_s);

 private:
  worker_process& worker_for(const std::string& path);

  isolation_options opts_;
  std::map<std::string, std::unique_ptr<worker_process>> workers_;  // by backend path
  std::map<std::string, std::string> availability_;
};

// `glabench __worker`: serves the parent's requests on descriptors 3 (in) and 4 (out),
// with the call-watch page on 5, until the parent closes the pipe; the exit code.
int run_worker();

}  // namespace glabench
