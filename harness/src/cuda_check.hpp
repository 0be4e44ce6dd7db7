// Turns a failed CUDA runtime call into an exception naming the call and the error.
// Only for files built with GLABENCH_WITH_CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace glabench {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                             cudaGetErrorString(status) + ")");
}

}  // namespace glabench
