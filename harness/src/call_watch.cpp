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
};
static_assert(std::atomic<int64_t>::is_always_lock_free);

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

shared_page* attached = nullptr;

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
  if (attached) attached->call_started_ns.store(now_ns(), std::memory_order_relaxed);
}

void call_watch::end() noexcept {
  if (attached) attached->call_started_ns.store(0, std::memory_order_relaxed);
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
}

double call_watch_page::seconds_in_call() const {
  const int64_t started = static_cast<shared_page*>(page_)->call_started_ns.load();
  return started ? double(now_ns() - started) / 1e9 : 0.0;
}

}  // namespace glabench
