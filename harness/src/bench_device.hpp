// The place a backend runs, as `glabench bench` and the tuning sweeps time it: a timer
// around the work on the backend's stream, a cache flush between samples, the free
// memory — and the one sampling loop, take_samples.
//
// CUDA: cuda_timer (events on the stream) and l2_flush (a buffer the size of L2,
// cleared on the same stream; for a multi-device backend, on every device it runs on).
// Host: cpu_timer (a steady clock) and llc_flush (twice the last-level cache, at most
// 128 MiB).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "device_context.hpp"
#include "stopping_criterion.hpp"

namespace glabench {

class bench_device {
 public:
  virtual ~bench_device() = default;
  virtual void start() = 0;         // timed work begins (on the stream)
  virtual double stop_ms() = 0;     // waits for the work; its duration in milliseconds
  virtual void flush_caches() = 0;  // evicts what the last call left in the caches
  virtual void synchronize() = 0;   // waits for the work enqueued so far
  virtual size_t free_bytes() const = 0;
};

// A host or CUDA bench_device for the context's device and stream.
std::unique_ptr<bench_device> make_bench_device(device_context& ctx);
// The same for a backend given several devices (glabench_problem.device_ids): timed on
// the context's stream (device_ids[0]'s), the L2 cache of every listed device flushed
// before each sample. A host context ignores the list.
std::unique_ptr<bench_device> make_bench_device(device_context& ctx,
                                                const std::vector<int32_t>& device_ids);
// A CUDA bench_device on a device and stream (a cudaStream_t; nullptr: the default
// stream), for tools that launch kernels themselves; throws without CUDA.
std::unique_ptr<bench_device> make_cuda_bench_device(int device_id, void* stream);

// Untimed calls before sampling, by default: the first call's one-time work (module
// loading, shared-memory limits, caches) stays out of the samples.
inline constexpr int kDefaultWarmupCalls = 3;

// Times `call` on `dev`: `warmups` untimed calls, then samples — each after
// `before_sample()` (untimed: the bench poisons the outputs there) and a cache flush
// unless `hot` — until `stop` says enough; the samples are in stop.samples().
// `on_sample(n, cv)` is called after each sample. `decide(must, may)` turns the rule's
// verdict into the stop (bench across processes: rank_agreement::stop); `must` where it
// stops for its sample count or time cap, `may` where it stops at all.
template <typename BeforeSample, typename Call, typename OnSample, typename Decide>
void take_samples(bench_device& dev, stopping_criterion& stop, int warmups, bool hot,
                  BeforeSample&& before_sample, Call&& call, OnSample&& on_sample,
                  Decide&& decide) {
  for (int i = 0; i < warmups; ++i) {
    if (!hot) dev.flush_caches();
    call();
  }
  dev.synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    before_sample();
    if (!hot) dev.flush_caches();
    dev.start();
    call();
    const double ms = dev.stop_ms();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool may = true, must = true;
    if (stop.reason() == stop_reason::not_yet) {
      may = stop.add(ms, elapsed);
      must = may && stop.reason() != stop_reason::noise_target;
    } else {  // stopped here, not yet everywhere
      must = stop.add_after_stop(ms, elapsed);
    }
    on_sample(stop.samples().size(), stop.cv());
    if (decide(must, may)) break;
  }
}
template <typename Call>
void take_samples(bench_device& dev, stopping_criterion& stop, int warmups, bool hot, Call&& call) {
  take_samples(
      dev, stop, warmups, hot, [] {}, call, [](size_t, double) {},
      [](bool, bool may) { return may; });
}

}  // namespace glabench
