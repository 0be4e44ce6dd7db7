// What `glabench bench` needs of the place a backend runs: a timer around the work on
// the backend's stream, a cache flush between samples, the free memory, a description
// of the device for the results' context, and the device's measured peak rates.
//
// CUDA: CUDA events recorded on the stream (the time the GPU spent on the call, launch
// gaps included, host overhead before the first launch excluded); the flush clears a
// buffer the size of the L2 cache on the same stream. Host: a steady clock around the
// call; the flush writes a buffer twice the last-level cache size (at most 128 MiB).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "bench_results.hpp"
#include "device_context.hpp"

namespace glabench {

class bench_device {
 public:
  virtual ~bench_device() = default;
  virtual void start() = 0;         // timed work begins (on the stream)
  virtual double stop_ms() = 0;     // waits for the work; its duration in milliseconds
  virtual void flush_caches() = 0;  // evicts what the last call left in the caches
  virtual size_t free_bytes() const = 0;
};

// MemAvailable of /proc/meminfo (the largest size_t when unknown).
size_t host_available_bytes();

// A host or CUDA bench_device for the context's device.
std::unique_ptr<bench_device> make_bench_device(device_context& ctx);

// Name, clocks, driver, memory, … for the results' context.
nlohmann::json host_description();
nlohmann::json cuda_description(int device_id);  // {} when glabench has no CUDA

// The GPU's state now, read through NVML (opened at run time): SM and memory clocks,
// temperature, power and the clock-event (throttle) reasons bitmask (nvml.h's
// nvmlClocksEventReason*: 0x1 idle, 0x4 applications clocks, 0x20/0x40 thermal, …) —
// recorded after the peak measurements (the GPU busy) and at the end of a run, so that
// throttling shows in the results. {"nvml": why}
// when NVML cannot be read.
nlohmann::json gpu_state(int device_id);

// Copy bandwidth (memcpy on the host; device-to-device cudaMemcpy on a GPU) and, on a
// GPU, cuBLAS GEMM rates per dtype (cuBLAS is loaded at run time; without it the GEMM
// peaks are missing and `notes` says why).
measured_peaks measure_host_peaks();
measured_peaks measure_cuda_peaks(int device_id);

}  // namespace glabench
