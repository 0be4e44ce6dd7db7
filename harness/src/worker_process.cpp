#include "worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_status.hpp"
#include "worker_channel.hpp"

namespace glabench {
namespace {

// The descriptors the worker finds its pipes and the watch page on (run_worker moves them
// out of a plugin's way before it loads one).
constexpr int kWorkerIn = 3, kWorkerOut = 4, kWorkerWatch = 5;

// How long a worker whose pipe has ended is given to end on its own, so that its own
// signal or exit code is what is reported.
constexpr double kGraceSeconds = 2.0;
// How long a killed worker is waited for.
constexpr double kReapSeconds = 10.0;

// The process groups of the workers alive, for the signal handler below: a fixed table of
// atomics, which a handler may read.
constexpr size_t kMaxWorkers = 256;
std::atomic<pid_t> g_worker_groups[kMaxWorkers];

void track(pid_t group) {
  for (auto& slot : g_worker_groups) {
    pid_t free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, group)) return;
  }
  // Table full: this worker still dies with glabench (PR_SET_PDEATHSIG), its group not.
}

void untrack(pid_t group) {
  for (auto& slot : g_worker_groups) {
    pid_t mine = group;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

// glabench interrupted: the workers' groups go first (they are in sessions of their own,
// which a terminal's ^C does not reach), then glabench ends as the signal would end it.
extern "C" void kill_workers_and_end(int sig) {
  for (auto& slot : g_worker_groups)
    if (const pid_t group = slot.load(); group > 0) kill(-group, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);  // delivered, with the default action, once this handler returns
}

void install_handlers_once() {
  static const bool done = [] {
    signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe is an error return, not a signal
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // nohup
      struct sigaction sa {};
      sa.sa_handler = kill_workers_and_end;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
    return true;
  }();
  (void)done;
}

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("worker pipe: ") + strerror(errno));
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

worker_process::worker_process() {
  install_handlers_once();
}

worker_process::~worker_process() {
  stop();
}

void worker_process::start() {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a worker pipe: ") + strerror(errno));
  if (pipe2(from, O_CLOEXEC) != 0) {
    const int e = errno;
    close(to[0]);
    close(to[1]);
    throw std::runtime_error(std::string("cannot create a worker pipe: ") + strerror(e));
  }
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  auto close_all = [&] {
    for (int fd : {to[0], to[1], from[0], from[1], devnull})
      if (fd >= 0) close(fd);
  };
  if (devnull < 0) {
    const int e = errno;
    close_all();
    throw std::runtime_error(std::string("cannot open /dev/null for a worker: ") + strerror(e));
  }
  watch_.reset();
  // Everything exec needs is prepared before fork: the child calls only async-signal-safe
  // functions (and prctl) in a process that may have other threads.
  const std::string exe = "/proc/self/exe";
  std::vector<std::string> args = {"glabench", "__worker"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int watch_fd = watch_.fd();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close_all();
    throw std::runtime_error(std::string("cannot start a worker: ") + strerror(e));
  }
  if (pid == 0) {
    // A session and process group of its own; killed if glabench dies.
    if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    // Move the descriptors to 0 (/dev/null), 1 (glabench's stderr), 3, 4 and 5 without
    // clobbering one another: first to high numbers (close-on-exec), then down (dup2
    // leaves close-on-exec off).
    const int in = fcntl(to[0], F_DUPFD_CLOEXEC, 100), out = fcntl(from[1], F_DUPFD_CLOEXEC, 100),
              watch = fcntl(watch_fd, F_DUPFD_CLOEXEC, 100),
              null = fcntl(devnull, F_DUPFD_CLOEXEC, 100);
    if (in < 0 || out < 0 || watch < 0 || null < 0 || dup2(null, 0) < 0 ||
        (dup2(2, 1) < 0 && dup2(null, 1) < 0) || dup2(in, kWorkerIn) < 0 ||
        dup2(out, kWorkerOut) < 0 || dup2(watch, kWorkerWatch) < 0)
      _exit(127);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  close(devnull);
  pid_ = pid;
  track(pid);
  to_worker_ = to[1];
  from_worker_ = from[0];
  set_nonblocking(to_worker_);
  set_nonblocking(from_worker_);
}

bool worker_process::ended() const {
  siginfo_t info{};
  return waitid(P_PID, id_t(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
}

std::string worker_process::stop() {
  if (pid_ < 0) return "";
  // Its group first (whatever the plugin started), then the worker, which may not have
  // made its session yet. An ended worker not yet reaped keeps its process and group ids,
  // so neither names a process that is not the worker's.
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  untrack(pid_);
  // A process in an uninterruptible wait (a driver call) ends only once that returns:
  // glabench does not wait for it longer than this, and leaves it to be reaped later.
  int status = 0;
  pid_t r = 0;
  const auto since = std::chrono::steady_clock::now();
  for (;;) {
    r = waitpid(pid_, &status, WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r != 0 || seconds_since(since) >= kReapSeconds) break;
    usleep(1000);
  }
  pid_ = -1;
  for (int* fd : {&to_worker_, &from_worker_})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
  if (r == 0) return fmt::format("did not end within {:g} s of SIGKILL", kReapSeconds);
  if (r < 0) return "vanished";
  if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerLostPipeExit)
    return how_child_ended(status) +
           ": the descriptors of its pipe to glabench were closed or replaced (by the backend)";
  return how_child_ended(status);
}

worker_reply worker_process::request(const nlohmann::json& req, const worker_limits& limits) {
  const std::vector<std::uint8_t> frame = encode_frame(req);
  if (frame.empty()) throw std::runtime_error("a worker request exceeds the frame limit");
  // A worker that ended after its last reply (a plugin's thread, a signal) is replaced.
  if (pid_ >= 0 && ended()) stop();
  if (pid_ < 0) start();
  worker_reply reply;
  auto finish = [&](worker_reply::kind kind, std::string what) {
    reply.outcome = kind;
    reply.what = std::move(what);
    return reply;
  };
  frame_buffer in;
  bool pipe_ended = false;  // end of file, or the worker's end of the request pipe closed
  // Reads what the worker has written; true when a whole reply is in.
  auto drain = [&]() -> bool {
    char buf[65536];
    for (;;) {
      const ssize_t r = read(from_worker_, buf, sizeof buf);
      if (r > 0) {
        in.append(buf, size_t(r));
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) pipe_ended = true;
      break;
    }
    std::optional<nlohmann::json> message = in.take();
    if (message) reply.message = std::move(*message);
    return message.has_value();
  };
  size_t sent = 0;
  uint64_t marks = watch_.marks();
  auto last_progress = std::chrono::steady_clock::now();
  for (;;) {
    pollfd p[2] = {{from_worker_, POLLIN, 0}, {to_worker_, POLLOUT, 0}};
    const nfds_t n = sent < frame.size() ? 2 : 1;
    const int ready = poll(p, n, 100);
    if (ready < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll on the worker pipe: ") + strerror(errno));
    try {
      if (ready > 0 && p[0].revents) {
        const bool whole = drain();
        if (whole) return reply;
        last_progress = std::chrono::steady_clock::now();
      }
    } catch (const std::exception& e) {
      return finish(worker_reply::crashed,
                    "sent a malformed reply (" + std::string(e.what()) + ") and " + stop());
    }
    if (n == 2 && ready > 0 && p[1].revents) {
      const ssize_t w = write(to_worker_, frame.data() + sent, frame.size() - sent);
      if (w > 0) sent += size_t(w);
      if (w < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) pipe_ended = true;
    }
    if (pipe_ended || ended()) {
      // Gone, or its pipe is: given a moment to end on its own, so that its own signal or
      // exit code is reported, and killed with its group after that.
      const auto since = std::chrono::steady_clock::now();
      while (!ended() && seconds_since(since) < kGraceSeconds) usleep(10000);
      const bool on_its_own = ended();
      try {
        if (drain()) {  // a whole reply, written before it ended
          stop();
          return reply;
        }
      } catch (const std::exception&) {
        // a partial or malformed reply from a worker that ended: as if none came
      }
      const std::string how = stop();
      return finish(worker_reply::crashed,
                    on_its_own ? how : "closed its pipe to glabench and was killed");
    }
    // In this order: a call that ends between the two reads has changed the marks.
    const double in_call = watch_.seconds_in_call();
    if (const uint64_t now = watch_.marks(); now != marks) {
      marks = now;
      last_progress = std::chrono::steady_clock::now();
    }
    const bool warmup = watch_.warmup_call();
    if (const double limit = warmup ? std::max(limits.call_s, limits.warmup_call_s) : limits.call_s;
        in_call > limit) {
      stop();
      return finish(worker_reply::timeout,
                    fmt::format("a backend {}call ran {:.1f} s, past the limit of {:g} s, and "
                                "was killed",
                                warmup ? "warm-up " : "", in_call, limit));
    }
    if (const double idle = seconds_since(last_progress); in_call == 0 && idle > limits.idle_s) {
      stop();
      return finish(worker_reply::timeout,
                    fmt::format("the worker neither answered nor started a backend call for "
                                "{:.1f} s, past the limit of {:g} s, and was killed",
                                idle, limits.idle_s));
    }
  }
}

}  // namespace glabench
