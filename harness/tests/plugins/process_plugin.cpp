// Backends that compute gla in fp64 correctly (gla_fp64.hpp) and, in their forward, do
// something to the process they run in, for the isolation tests of the worker's process.
// One source, compiled once per variant (PROCESS_PLUGIN_VARIANT), each into its own module:
//   chdir         changes the working directory to / (a relative fixture path would break)
//   fd_leak       opens /dev/null until no descriptor is left, and keeps them all
//   dup2_fds      (first forward) puts a pipe of its own over descriptors 3 (read end) and 4 (write
//   end),
//                 where the worker got its pipe, and /dev/null over 5 to 9
//   close_fds     closes every descriptor from 3 up to the limit: the worker's pipe goes
//   kill_group    kill(0, SIGTERM): its whole process group
//   fork_segv     starts a child that sleeps (by a raw clone, which runs no fork handler:
//                 the child keeps every descriptor), then writes through a null pointer
//   fork_linger   (first forward) forks a child that writes its pid to $PROCESS_PLUGIN_PID
//                 and sleeps for five minutes with the worker's stdout and stderr
//   spin_outside  (first forward) sets a timer whose signal handler, once none of the
//                 plugin's functions is running, never returns: the worker stops answering
//                 outside any call
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gla_fp64.hpp"

namespace {

using namespace glabench::backend_support;

#define VARIANT_IS(name) (std::strcmp(PROCESS_PLUGIN_VARIANT, #name) == 0)

extern const glabench_backend kBackend;

volatile int* volatile nowhere = nullptr;
// How many of this plugin's functions are running (they call one another: forward calls
// supports); spin_outside's handler waits for none to be.
std::atomic<int> in_plugin{0};
struct inside {
  inside() { ++in_plugin; }
  ~inside() { --in_plugin; }
};

void arm_timer() {
  itimerval t{};
  t.it_value.tv_usec = 1000;
  setitimer(ITIMER_REAL, &t, nullptr);
}

// spin_outside's handler: inside the plugin it tries again later; outside, it never
// returns.
extern "C" void on_alarm(int) {
  if (in_plugin.load() > 0) {
    arm_timer();
    return;
  }
  for (;;) pause();
}

void misbehave() {
  static bool first = true;
  const bool once = first;
  first = false;
  if (VARIANT_IS(chdir)) {
    if (chdir("/") != 0) std::abort();
  }
  if (VARIANT_IS(fd_leak))
    while (open("/dev/null", O_RDONLY) >= 0) {
    }
  if (VARIANT_IS(dup2_fds) && once) {
    int mine[2];
    if (pipe(mine) != 0) std::abort();
    const int in = fcntl(mine[0], F_DUPFD, 100), out = fcntl(mine[1], F_DUPFD, 100);
    const int null = fcntl(open("/dev/null", O_RDWR), F_DUPFD, 100);
    dup2(in, 3);
    dup2(out, 4);
    for (int fd = 5; fd <= 9; ++fd) dup2(null, fd);
  }
  if (VARIANT_IS(close_fds)) {
    rlimit r{};
    getrlimit(RLIMIT_NOFILE, &r);
    const int top = r.rlim_cur == RLIM_INFINITY || r.rlim_cur > 65536 ? 65536 : int(r.rlim_cur);
    for (int fd = 3; fd < top; ++fd) close(fd);
  }
  if (VARIANT_IS(kill_group)) kill(0, SIGTERM);
  if (VARIANT_IS(fork_segv)) {
    const long child = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (child == 0)
      for (;;) pause();
    *nowhere = 1;
  }
  if (VARIANT_IS(fork_linger) && once) {
    const pid_t child = fork();
    if (child == 0) {
      if (const char* file = std::getenv("PROCESS_PLUGIN_PID")) {
        char text[32];
        const int n = std::snprintf(text, sizeof text, "%d\n", int(getpid()));
        const int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
          (void)!write(fd, text, size_t(n));
          close(fd);
        }
      }
      sleep(300);
      _exit(0);
    }
  }
  if (VARIANT_IS(spin_outside) && once) {
    signal(SIGALRM, on_alarm);
    arm_timer();
  }
}

glabench_status device_available(glabench_message* m) {
  const inside mark;
  return gla_fp64::device_available(m);
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  const inside mark;
  return gla_fp64::supports(kBackend, p, mode, reason);
}

glabench_status workspace_size(const glabench_problem* p, glabench_mode mode, size_t* bytes,
                               glabench_message* m) {
  const inside mark;
  return gla_fp64::workspace_size(p, mode, bytes, m);
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  const inside mark;
  misbehave();
  return gla_fp64::forward(kBackend, p, a, error);
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  const inside mark;
  return gla_fp64::backward(kBackend, p, a, error);
}

const glabench_backend kBackend = {GLABENCH_ABI_MAJOR,
                                   GLABENCH_ABI_MINOR,
                                   sizeof(glabench_backend),
                                   "test_" PROCESS_PLUGIN_VARIANT,
                                   "0.0.0",
                                   kDLCPU,
                                   gla_fp64::kCapabilities,
                                   gla_fp64::kNumCapabilities,
                                   device_available,
                                   supports,
                                   workspace_size,
                                   forward,
                                   backward,
                                   GLABENCH_BUILD_INFO_INIT,
                                   nullptr,
                                   nullptr,
                                   nullptr,
                                   nullptr};

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  return &kBackend;
}
