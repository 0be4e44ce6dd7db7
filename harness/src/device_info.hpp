// What a results file says about the machine: the host's CPU and available memory, and
// a CUDA device's name, compute capability, SM count, clocks, L2 and memory sizes,
// driver and runtime versions.
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

}  // namespace glabench
