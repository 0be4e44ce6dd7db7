// The CUDA backends' one error path. A failed CUDA call becomes a message naming the
// step and the error ("cudaMalloc: cudaErrorMemoryAllocation (out of memory)",
// cuda_error); host code that runs many steps returns a status — empty on success, else
// that message — and passes a failure up unchanged (GLABENCH_TRY, GLABENCH_TRY_CUDA); at
// the ABI boundary a status or a CUDA error becomes the call's glabench_status and
// message (cuda_plugin.hpp's finish). Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace glabench::cuda_plugin {

// Empty on success, else what failed.
using status = std::string;

inline std::string cuda_error(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

}  // namespace glabench::cuda_plugin

// In a function returning a status: returns the status of `expr` when it is a failure.
#define GLABENCH_TRY(expr)                                                   \
  do {                                                                       \
    if (::glabench::cuda_plugin::status s_ = (expr); !s_.empty()) return s_; \
  } while (0)
// In a function returning a status: returns cuda_error(…, what) when the CUDA call `expr`
// fails.
#define GLABENCH_TRY_CUDA(expr, what)                                                  \
  do {                                                                                 \
    if (cudaError_t e_ = (expr)) return ::glabench::cuda_plugin::cuda_error(e_, what); \
  } while (0)
