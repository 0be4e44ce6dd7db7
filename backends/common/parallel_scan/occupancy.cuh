// What the launch asks the CUDA runtime about the current device — its SM count, the
// blocks of a kernel an SM holds — and the shared-memory limit it raises per kernel,
// each done once per device and remembered rather than on every launch: the answers do
// not change while the process runs.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstddef>

namespace glabench::parallel_scan {

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

// The current device's SM count (0 if it cannot be read).
inline int sm_count() {
  static per_device known{};
  return remembered(known, [](int device) {
    int sms = 0;
    return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess ? sms
                                                                                               : 0;
  });
}

// Raises `kernel`'s dynamic shared-memory limit to smem_bytes (a constant per kernel),
// once per device rather than on every launch.
template <auto kernel>
cudaError_t allow_shared_memory(size_t smem_bytes) {
  static per_device done{};
  cudaError_t error = cudaSuccess;
  remembered(done, [&](int) {
    error =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes));
    return error == cudaSuccess ? 1 : 0;
  });
  return error;
}

// Blocks of `kernel` an SM of the current device holds at once (registers, shared
// memory); 0 if unknown.
template <auto kernel>
int resident_blocks(int threads, size_t smem_bytes) {
  static per_device known{};
  return remembered(known, [&](int) {
    int n = 0;
    if (allow_shared_memory<kernel>(smem_bytes) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem_bytes) !=
            cudaSuccess)
      return 0;
    return n;
  });
}

}  // namespace glabench::parallel_scan
