// Code that drives several GPUs from one thread (the ring across GPUs, NCCL's set-up)
// makes each device current in turn; a guard leaves the calling thread's current device
// as it found it, however the scope ends, so the harness's next call runs where it
// expects. Plain C++.
#pragma once

#include <cuda_runtime_api.h>

namespace glabench::cuda_plugin {

class device_guard {
 public:
  device_guard() { cudaGetDevice(&previous_); }
  ~device_guard() { cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace glabench::cuda_plugin
