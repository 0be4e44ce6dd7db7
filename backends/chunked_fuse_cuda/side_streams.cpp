// A device's side streams (side_streams.hpp).
#include "side_streams.hpp"

#include <map>
#include <mutex>

namespace glabench::chunked {

cuda_plugin::status side_streams_of_device(side_streams** out) {
  static std::mutex m;
  static std::map<int, side_streams> made;
  std::lock_guard<std::mutex> guard(m);
  int device = 0;
  GLABENCH_TRY_CUDA(cudaGetDevice(&device), "cudaGetDevice");
  if (auto it = made.find(device); it != made.end()) {
    *out = &it->second;
    return {};
  }
  side_streams s;
  cudaError_t e = cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming);
  for (int i = 0; i < kSideStreams && e == cudaSuccess; ++i) {
    e = cudaStreamCreateWithFlags(&s.streams[i], cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s.join[i], cudaEventDisableTiming);
  }
  if (e != cudaSuccess) {  // nothing half-made is kept
    for (cudaStream_t x : s.streams)
      if (x) cudaStreamDestroy(x);
    for (cudaEvent_t x : s.join)
      if (x) cudaEventDestroy(x);
    if (s.fork) cudaEventDestroy(s.fork);
    return cuda_plugin::cuda_error(e, "side streams");
  }
  *out = &made.emplace(device, s).first->second;
  return {};
}

}  // namespace glabench::chunked
