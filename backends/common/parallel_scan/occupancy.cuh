// What the launch asks the CUDA runtime about its kernels on the current device — the
// blocks of a kernel an SM holds — and the shared-memory limit it raises per kernel,
// each done once per device and remembered (../device_attributes.hpp, which also has the
// SM count) rather than on every launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "../device_attributes.hpp"

namespace glabench::parallel_scan {

// The remembering and the SM count are the neutral ../device_attributes.hpp's.
using cuda_plugin::per_device;
using cuda_plugin::remembered;
using cuda_plugin::runs_sm90_code;
using cuda_plugin::sm_count;

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
