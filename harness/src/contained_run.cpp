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
#include <cstdio>

#include "child_status.hpp"

namespace glabench {

namespace {

constexpr size_t kMaxMessage = 64 << 10;

// This process's address space in bytes (/proc/self/statm), 0 where it cannot be read.
uint64_t address_space_bytes() {
  unsigned long long pages = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  const bool read = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  const long page = sysconf(_SC_PAGE_SIZE);
  return read && page > 0 ? pages * static_cast<uint64_t>(page) : 0;
}

}  // namespace

contained_outcome run_contained(const std::function<std::string()>& work, double limit_s,
                                uint64_t max_more_bytes) {
  // The child's bound, from this process's size before the fork (the child's at its start):
  // the child does not read files, nor allocate, before its work.
  const uint64_t now = max_more_bytes > 0 ? address_space_bytes() : 0;
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
    if (now > 0) {
      const rlimit room{now + max_more_bytes, now + max_more_bytes};
      setrlimit(RLIMIT_AS, &room);
    }
    std::string answer = "K";  // then what the work returned
    try {
      answer += work().substr(0, kMaxMessage);
    } catch (...) {
      // an exception is a normal end: the caller's own run throws it again
    }
    for (size_t at = 0; at < answer.size();) {
      const ssize_t n = write(done[1], answer.data() + at, answer.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(done[1]);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  bool timed_out = false;
  std::string answer;  // 'K' and the work's message, read until the child closes the pipe
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
    char buf[4096];
    const ssize_t n = read(done[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed the pipe: it ended
    if (answer.size() <= kMaxMessage) answer.append(buf, static_cast<size_t>(n));
  }
  const bool answered = !answer.empty() && answer[0] == 'K';
  close(done[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return {false, fmt::format("did not end within {:g} s", limit_s), ""};
  if (answered && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return {true, "", answer.substr(1)};
  if (WIFSIGNALED(status) || WIFEXITED(status)) return {false, how_child_ended(status), ""};
  return {false, "ended without answering", ""};
}

}  // namespace glabench
