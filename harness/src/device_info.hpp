// What a results file says about the machine: the host's CPU and available memory, and
// a CUDA device's name, compute capability, SM count, clocks, L2 and memory sizes,
// driver and runtime versions; and which of them a run's backends ran on.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

namespace glabench {

// MemAvailable of /proc/meminfo (the largest size_t when unknown).
size_t host_available_bytes();

// {"host_cpu", "host_cpus"}
nlohmann::json host_description();

// {"device", "compute_capability", "sm_count", "sm_clock_max_mhz", …}; {} when
// glabench was built without CUDA.
nlohmann::json cuda_description(int device_id);

// Where a run's backends ran, for its results' context: the host (host_description) and
// "device": device_id's cuda_description when `any_cuda` (a CUDA backend is in the run)
// and this machine has a usable GPU (on_gpu), else "cpu: <host cpu>", with
// "cuda_unavailable" saying why where a CUDA backend could not run.
struct run_device {
  nlohmann::json context;
  bool on_gpu = false;
};
run_device describe_run_device(bool any_cuda, int device_id);

}  // namespace glabench
