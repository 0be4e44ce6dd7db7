// Backends run isolated: every call into a plugin happens in a worker process
// (worker_process.hpp), one per backend, so that a backend that crashes, exits, aborts,
// throws through the C boundary or hangs costs only its own case. The parent describes
// plugins through a worker too and never loads one itself. A worker that dies or is
// killed is replaced by a fresh one for the next case; a fault in a worker, whatever it
// is, becomes the result of the case it was running (failed, crashed or timeout), never
// the run's. A backend that has timed out in two requests in a row is not asked again:
// its remaining cases and configurations are recorded as skipped, so a hanging backend
// costs its time limit twice, not once per case.
//
// The worker depends on nothing a plugin can change: it is given the fixture itself
// (not its path), loads its plugin (by absolute path) before any of that plugin's code
// has run, keeps its pipe on descriptors out of a plugin's way and checks them before
// each use (run_worker).
//
// Timing happens inside the worker exactly as in one process (bench_worker runs the same
// session code); the only addition in a timed call is call_watch's few stores.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "backend_loader.hpp"
#include "bench_results.hpp"
#include "decode_drift.hpp"
#include "fixture.hpp"
#include "verifier.hpp"
#include "worker_process.hpp"

namespace glabench {

struct isolation_options {
  // A backend call running longer than this gets its worker killed (--call-timeout), and
  // so does a worker that neither answers nor starts a call for as long outside any call.
  // Loading a plugin (dlopen, its constructors and entry function) counts as a call.
  double call_timeout_s = 600;
};

// Requests in a row that a backend may time out in before its remaining ones are skipped.
inline constexpr int kTimeoutsBeforeSkipping = 2;

class backend_isolation {
 public:
  explicit backend_isolation(isolation_options opts) : opts_(opts) {}

  // The backend at `path` as a worker loaded it: its table's name, version, device and
  // capabilities (no functions: they only run in workers). Throws backend_load_error
  // when it fails to load, kills the worker that tried or does not load within the limit.
  loaded_backend describe(const std::string& path);
  // What the backend's device_available() said in the worker that described it
  // ("available" or "unavailable: …").
  std::string availability(const std::string& path) const;

  // Never throws for what the worker does: a worker that fails, dies or is killed gives
  // a failed, crashed or timeout case; after kTimeoutsBeforeSkipping timeouts in a row,
  // a skipped one without asking the worker.
  verify_case_result verify(const loaded_backend& backend, const fixture& f, dtype storage,
                            const verify_options& opts);
  // One bench configuration (a bench_worker request); a backend call is also stopped
  // past `call_limit_s`. A row the worker did not make (failed, crashed, timeout,
  // skipped) has an empty config: the caller fills it in.
  bench_row bench(const loaded_backend& backend, const nlohmann::json& request,
                  double call_limit_s);
  // One chained-decode case (decode_drift.hpp), never throwing for what the worker does,
  // as verify().
  decode_drift_result decode_drift(const loaded_backend& backend, op_kind op, dtype storage,
                                   const std::string& gates, const decode_drift_options& opts);

 private:
  // How one request ended: accepted (the worker answered, and `accept` took the payload
  // under `key` of its reply), or not, with the status and message of a case the worker
  // did not judge: skipped (the backend timed out in the requests before), crashed,
  // timeout, or failed (the worker answered with an error or a malformed payload). `what`
  // names a request in messages ("case", "configuration").
  struct request_outcome {
    bool accepted = false;
    case_status status = case_status::failed;
    std::string message;
    double seconds = 0;  // waiting for the reply
  };
  request_outcome ask(const loaded_backend& backend, const nlohmann::json& request,
                      const worker_limits& limits, const char* what, const char* key,
                      const std::function<void(const nlohmann::json&)>& accept);
  worker_process& worker_for(const std::string& path);
  // Counts the outcome towards `path`'s timeouts in a row; the reason its next requests
  // are skipped, once there have been kTimeoutsBeforeSkipping.
  void count_outcome(const std::string& path, const worker_reply& reply, const char* what);

  isolation_options opts_;
  std::map<std::string, std::unique_ptr<worker_process>> workers_;  // by backend path
  std::map<std::string, std::string> availability_;
  std::map<std::string, int> timeouts_in_a_row_;    // by backend path
  std::map<std::string, std::string> skip_reason_;  // by backend path, once skipping
};

// `glabench __worker`: serves the parent's requests on descriptors 3 (in) and 4 (out),
// with the call-watch page on 5 (each moved out of a plugin's way first), until the
// parent closes the pipe; the exit code.
int run_worker();

}  // namespace glabench
