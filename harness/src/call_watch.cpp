#include "call_watch.hpp"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace glabench {
namespace {

struct shared_page {
  std::atomic<int64_t> call_started_ns;  // CLOCK_MONOTONIC; 0 outside a call
  std::atomic<uint64_t> marks;           // starts and ends of calls (one writer: the worker)
  std::atomic<int32_t> warmup;           // the current call began in a warmup_scope
};
static_assert(std::atomic<int64_t>::is_always_lock_free);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// One writer (the worker's calling thread): a load and a store, no locked instruction.
void bump(std::atomic<uint64_t>& marks) {
  marks.store(marks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

shared_page* attached = nullptr;
bool in_warmup = false;  // a warmup_scope is open (the worker's calling thread)

void* map_page(int fd) {
  void* p = mmap(nullptr, sizeof(shared_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw std::runtime_error("call watch: cannot map the shared page");
  return p;
}

}  // namespace

void call_watch::attach(int fd) {
  attached = static_cast<shared_page*>(map_page(fd));
}

void call_watch::begin() noexcept {
  if (!attached) return;
  // The flag before the start time: a parent that sees the start sees the flag.
  attached->warmup.store(in_warmup ? 1 : 0, std::memory_order_relaxed);
  attached->call_started_ns.store(now_ns(), std::memory_order_release);
  bump(attached->marks);
}

warmup_scope::warmup_scope() noexcept {
  in_warmup = true;
}
warmup_scope::~warmup_scope() {
  in_warmup = false;
}

void call_watch::end() noexcept {
  if (!attached) return;
  attached->call_started_ns.store(0, std::memory_order_relaxed);
  bump(attached->marks);
}

call_watch_page::call_watch_page() {
  // Close-on-exec: a worker gets its own copy at a fixed descriptor (worker_process).
  fd_ = memfd_create("glabench-call-watch", MFD_CLOEXEC);
  if (fd_ < 0 || ftruncate(fd_, sizeof(shared_page)) != 0)
    throw std::runtime_error("call watch: cannot create the shared page");
  page_ = map_page(fd_);
  reset();
}

call_watch_page::~call_watch_page() {
  if (page_) munmap(page_, sizeof(shared_page));
  if (fd_ >= 0) close(fd_);
}

void call_watch_page::reset() {
  static_cast<shared_page*>(page_)->call_started_ns.store(0);
  static_cast<shared_page*>(page_)->marks.store(0);
  static_cast<shared_page*>(page_)->warmup.store(0);
}

uint64_t call_watch_page::marks() const {
  return static_cast<shared_page*>(page_)->marks.load();
}

double call_watch_page::seconds_in_call() const {
  const int64_t started = static_cast<shared_page*>(page_)->call_started_ns.load();
  return started ? double(now_ns() - started) / 1e9 : 0.0;
}

bool call_watch_page::warmup_call() const {
  return static_cast<shared_page*>(page_)->warmup.load() != 0;
}

}  // namespace glabench
