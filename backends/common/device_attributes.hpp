// What the CUDA backends ask the runtime about the current device, asked once per device
// and remembered rather than on every launch: the answers do not change while the
// process runs. The SM count (sm_count) sizes grids; `remembered` also serves kernel
// attributes (parallel_scan/occupancy.cuh, runs_sm90_code).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>

namespace glabench::cuda_plugin {

// Per-device answers (up to 64 devices): remembered(known, ask) returns ask(device)
// for the current device, asking once; 0 (failed, or the device cannot be read) is
// not remembered.
using per_device = std::array<std::atomic<int>, 64>;
template <typename Ask>
int remembered(per_device& known, Ask&& ask) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  const bool cacheable = device >= 0 && device < int(known.size());
  if (cacheable)
    if (const int cached = known[device].load(std::memory_order_relaxed)) return cached;
  const int answer = ask(device);
  if (cacheable && answer) known[device].store(answer, std::memory_order_relaxed);
  return answer;
}

// Whether `kernel` runs sm_90 code on the current device, asked once into `known`: compiled
// for sm_90 or newer, not the driver's compile of older PTX (binaryVersion 90, ptxVersion
// 80), so that Hopper's instructions (clusters, bulk copies) are in it.
inline bool runs_sm90_code(per_device& known, const void* kernel) {
  return remembered(known, [kernel](int) {
           cudaFuncAttributes f{};
           if (cudaFuncGetAttributes(&f, kernel) != cudaSuccess) return 0;
           return f.binaryVersion >= 90 && f.ptxVersion >= 90 ? 1 : 2;
         }) == 1;
}

// The current device's SM count (0 if it cannot be read).
inline int sm_count() {
  static per_device known{};
  return remembered(known, [](int device) {
    int sms = 0;
    return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess ? sms
                                                                                               : 0;
  });
}

}  // namespace glabench::cuda_plugin
