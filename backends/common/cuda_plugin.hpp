// Plugin-ABI glue every CUDA backend needs: whether a CUDA device is there, and the end
// of the error path (cuda_error.hpp) at the ABI: a CUDA error or a status as the call's
// glabench_status and message.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "cuda_error.hpp"
#include "glabench/backend.h"
#include "glabench/backend_support.hpp"

namespace glabench::cuda_plugin {

inline glabench_status cuda_device_available(glabench_message* reason) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return backend_support::fail(reason, GLABENCH_ERROR_NO_DEVICE,
                                 e != cudaSuccess
                                     ? std::string("no CUDA device: ") + cudaGetErrorString(e)
                                     : "no CUDA device");
  }
  return GLABENCH_OK;
}

// The end of a call at the ABI: a CUDA error, or a status (cuda_error.hpp) of the step
// `what`, as the call's result and message.
inline glabench_status finish(cudaError_t e, const char* what, glabench_message* error) {
  if (e == cudaSuccess) return GLABENCH_OK;
  return backend_support::fail(error, GLABENCH_ERROR_RUNTIME, cuda_error(e, what));
}
inline glabench_status finish(const status& s, const char* what, glabench_message* error) {
  if (s.empty()) return GLABENCH_OK;
  return backend_support::fail(error, GLABENCH_ERROR_RUNTIME, std::string(what) + ": " + s);
}

}  // namespace glabench::cuda_plugin
