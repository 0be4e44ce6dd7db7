// Streams beside the caller's: a device's side streams, the event that forks them from the
// caller's stream and the events that join them back, made once per device (ahead of any
// capture: prepare) and kept for the process. Work forked and joined by events stays in
// the caller's stream's order, and a CUDA graph captures it. Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <array>

#include "../common/cuda_error.hpp"

namespace glabench::chunked {

constexpr int kSideStreams = 8;  // CUDA's default hardware queues per device

struct side_streams {
  std::array<cudaStream_t, kSideStreams> streams{};
  cudaEvent_t fork = nullptr;
  std::array<cudaEvent_t, kSideStreams> join{};
};

// The current device's side streams, made on first use.
cuda_plugin::status side_streams_of_device(side_streams** out);

}  // namespace glabench::chunked
