#include "contained_run.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>

#include "child_status.hpp"

namespace glabench {

contained_outcome run_contained(const std::function<void()>& work, double limit_s) {
  int done[2];
  if (pipe2(done, O_CLOEXEC) != 0) return {};
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(done[0]);
    close(done[1]);
    return {};
  }
  if (pid == 0) {
    close(done[0]);
    // Dies with glabench. Every signal that ends it ends it plainly: not through glabench's
    // handlers (which stop glabench's workers), nor through a crash handler the process
    // has (a test framework's, a sanitizer's), which would report the crash as its own.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
      std::signal(s, SIG_DFL);
    const rlimit no_core{0, 0};  // a crash leaves no core file behind
    setrlimit(RLIMIT_CORE, &no_core);
    try {
      work();
    } catch (...) {
      // an exception is a normal end: the caller's own run throws it again
    }
    const char ok = 'K';
    while (write(done[1], &ok, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  close(done[1]);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  bool answered = false, timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{done[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r == 0 || (r < 0 && errno == EINTR)) continue;
    char got = 0;
    ssize_t n = 0;
    while ((n = read(done[0], &got, 1)) < 0 && errno == EINTR) {
    }
    answered = n == 1 && got == 'K';  // n == 0: the child ended without answering
    break;
  }
  close(done[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return {false, fmt::format("did not end within {:g} s", limit_s)};
  if (answered && WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFSIGNALED(status) || WIFEXITED(status)) return {false, how_child_ended(status)};
  return {false, "ended without answering"};
}

}  // namespace glabench
