// One worker process, from the parent's side: glabench re-executed in worker mode
// (`glabench __worker`), which loads plugins and runs their calls, so that a backend that
// crashes, exits, aborts, throws through the C boundary or hangs costs only the case in
// flight. The parent sends a request and waits for the reply; a worker that dies is
// reported as crashed (signal or exit code), one whose backend call runs past the limit
// is killed and reported as timed out, and the next request starts a fresh worker.
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "call_watch.hpp"

namespace glabench {

struct worker_reply {
  enum kind { ok, crashed, timeout } outcome = ok;
  nlohmann::json message;  // the reply (ok)
  std::string what;        // how the worker ended (crashed, timeout)
};

class worker_process {
 public:
  worker_process();  // starts nothing yet
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // Sends `request` and waits for the reply; a backend call running past
  // `call_limit_s` gets the worker killed.
  worker_reply request(const nlohmann::json& request, double call_limit_s);

 private:
  void start();
  void stop(int signal);  // kills (if still running) and reaps the worker
  std::string reap();     // waits for the worker; how it ended

  call_watch_page watch_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
};

}  // namespace glabench
