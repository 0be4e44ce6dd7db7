#include "worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker_channel.hpp"

namespace glabench {
namespace {

// The descriptors the worker finds its pipes and the watch page on.
constexpr int kWorkerIn = 3, kWorkerOut = 4, kWorkerWatch = 5;

void ignore_sigpipe_once() {
  static const bool done = [] {
    signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe is an error return, not a signal
    return true;
  }();
  (void)done;
}

}  // namespace

worker_process::worker_process() {
  ignore_sigpipe_once();
}

worker_process::~worker_process() {
  stop(SIGKILL);
}

void worker_process::start() {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a worker pipe: ") + strerror(errno));
  watch_.reset();
  // Everything exec needs is prepared before fork: the child calls only dup2, close,
  // execv and _exit (async-signal-safe) in a process that may have other threads.
  const std::string exe = "/proc/self/exe";
  std::vector<std::string> args = {"glabench", "__worker"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int watch_fd = watch_.fd();
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {to[0], to[1], from[0], from[1]}) close(fd);
    throw std::runtime_error(std::string("cannot start a worker: ") + strerror(errno));
  }
  if (pid == 0) {
    // Move the three descriptors to 3, 4, 5 without clobbering one another: first to
    // high numbers (dup leaves O_CLOEXEC off), then down.
    const int in = fcntl(to[0], F_DUPFD, 100), out = fcntl(from[1], F_DUPFD, 100),
              watch = fcntl(watch_fd, F_DUPFD, 100);
    if (in < 0 || out < 0 || watch < 0 || dup2(in, kWorkerIn) < 0 || dup2(out, kWorkerOut) < 0 ||
        dup2(watch, kWorkerWatch) < 0)
      _exit(127);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  pid_ = pid;
  to_worker_ = to[1];
  from_worker_ = from[0];
}

std::string worker_process::reap() {
  int status = 0;
  pid_t r;
  do r = waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  pid_ = -1;
  close(to_worker_);
  close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (r < 0) return "the worker vanished";
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return "ended";
}

void worker_process::stop(int sig) {
  if (pid_ < 0) return;
  // Closing its input ends a healthy worker's loop; an unhealthy one is killed.
  close(to_worker_);
  to_worker_ = -1;
  if (sig) kill(pid_, sig);
  reap();
}

worker_reply worker_process::request(const nlohmann::json& req, double call_limit_s) {
  if (pid_ < 0) start();
  worker_reply reply;
  auto ended = [&](worker_reply::kind kind, std::string what) {
    reply.outcome = kind;
    reply.what = std::move(what);
    return reply;
  };
  if (!write_frame(to_worker_, req)) return ended(worker_reply::crashed, reap());
  for (;;) {
    pollfd p{from_worker_, POLLIN, 0};
    const int ready = poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll on the worker pipe: ") + strerror(errno));
    if (ready > 0) {
      std::optional<nlohmann::json> message;
      try {
        message = read_frame(from_worker_);
      } catch (const std::exception& e) {
        kill(pid_, SIGKILL);
        return ended(worker_reply::crashed, e.what() + std::string("; ") + reap());
      }
      if (!message) return ended(worker_reply::crashed, reap());
      reply.message = std::move(*message);
      return reply;
    }
    const double in_call = watch_.seconds_in_call();
    if (in_call > call_limit_s) {
      kill(pid_, SIGKILL);
      reap();
      return ended(worker_reply::timeout,
                   fmt::format("a backend call ran {:.1f} s, past the limit of {:g} s, and was "
                               "killed",
                               in_call, call_limit_s));
    }
  }
}

}  // namespace glabench
