// One worker process, from the parent's side: glabench re-executed in worker mode
// (`glabench __worker`), which loads plugins and runs their calls, so that a backend that
// crashes, exits, aborts, throws through the C boundary or hangs costs only the case in
// flight. The parent sends a request and waits for the reply, never blocking on the
// worker: a worker that dies is reported as crashed (signal or exit code), one whose
// backend call runs past the limit, or that neither answers nor starts or ends a call for
// as long outside any call, is killed and reported as timed out, and the next request
// starts a fresh worker.
//
// A worker runs in a session (and process group) of its own, is killed with its group, and
// never shares glabench's stdin or stdout: its stdin is /dev/null and its stdout is
// glabench's stderr, so a plugin's output and any process it leaves behind cannot mix into
// or hold glabench's stdout (`glabench … | cat` ends), and a plugin's kill(0, …) reaches
// only its own worker. Workers are killed with their groups when glabench is interrupted
// (SIGINT, SIGTERM, SIGHUP), and die with glabench otherwise (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "call_watch.hpp"

namespace glabench {

// The exit code of a worker that finds the descriptors of its pipe closed or replaced (by
// the backend it runs): it cannot answer, so it ends (run_worker).
inline constexpr int kWorkerLostPipeExit = 121;

struct worker_reply {
  enum kind { ok, crashed, timeout } outcome = ok;
  nlohmann::json message;  // the reply (ok)
  std::string what;        // how the worker ended (crashed, timeout)
};

struct worker_limits {
  double call_s = 600;  // a backend call running longer gets the worker killed
  // A worker that, outside any backend call, neither answers nor starts a call for this
  // long is killed (starting the worker and the harness's own work between calls count).
  double idle_s = 600;
  // A warm-up call's limit, where longer than call_s (call_watch::warmup_scope: a
  // configuration's first calls, which may compile, autotune or plan).
  double warmup_call_s = 0;
};

class worker_process {
 public:
  worker_process();  // starts nothing yet
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // Sends `request` and waits for the reply within `limits`.
  worker_reply request(const nlohmann::json& request, const worker_limits& limits);

 private:
  void start();
  // Kills the worker's process group (with the worker, if still running) and reaps the
  // worker: how it ended.
  std::string stop();
  // Whether the worker has ended (not yet reaped).
  bool ended() const;

  call_watch_page watch_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
};

}  // namespace glabench
