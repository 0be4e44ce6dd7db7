// When a worker's current backend call began, and how many call starts and ends it has
// marked, on a memory page the worker shares with its parent: the parent reads it while it
// waits, and kills a worker whose call has run past the time limit, or that has neither
// answered nor started or ended a call for as long outside any call. Marking a call is a
// few stores to that page, so it costs nothing measurable inside a timed region.
//
// In the worker (or in-process with --no-isolate) the page is attached or absent;
// watched_call marks a backend call for its lifetime either way. A call begun inside a
// warmup_scope is marked as a warm-up call (a configuration's first, which may compile,
// autotune or plan), which the parent may hold to a longer limit.
#pragma once

#include <cstdint>

namespace glabench {

namespace call_watch {
// Worker side: maps the page the parent passed as file descriptor `fd`.
void attach(int fd);
void begin() noexcept;  // a backend call starts (a no-op unless attached)
void end() noexcept;    // it returned
}  // namespace call_watch

// The calls begun during its lifetime are warm-up calls (not nested; one thread).
struct warmup_scope {
  warmup_scope() noexcept;
  ~warmup_scope();
  warmup_scope(const warmup_scope&) = delete;
  warmup_scope& operator=(const warmup_scope&) = delete;
};

struct watched_call {
  watched_call() noexcept { call_watch::begin(); }
  ~watched_call() { call_watch::end(); }
  watched_call(const watched_call&) = delete;
  watched_call& operator=(const watched_call&) = delete;
};

// Parent side: the page, created before the worker starts and inherited by it.
class call_watch_page {
 public:
  call_watch_page();
  ~call_watch_page();
  call_watch_page(const call_watch_page&) = delete;
  call_watch_page& operator=(const call_watch_page&) = delete;

  int fd() const { return fd_; }
  // Seconds the worker has been inside its current backend call; 0 when in none.
  double seconds_in_call() const;
  // Whether that call is a warm-up call (call_watch::warmup_scope).
  bool warmup_call() const;
  // How many times a call has started or ended: a change is progress.
  uint64_t marks() const;
  void reset();  // for a fresh worker

 private:
  int fd_ = -1;
  void* page_ = nullptr;
};

}  // namespace glabench
