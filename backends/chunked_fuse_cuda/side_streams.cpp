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
  for (int i = 0; i < kSideStreams; ++i) {
    GLABENCH_TRY_CUDA(cudaStreamCreateWithFlags(&s.streams[i], cudaStreamNonBlocking),
                      "cudaStreamCreateWithFlags");
    GLABENCH_TRY_CUDA(cudaEventCreateWithFlags(&s.join[i], cudaEventDisableTiming),
                      "cudaEventCreateWithFlags");
  }
  GLABENCH_TRY_CUDA(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming),
                    "cudaEventCreateWithFlags");
  *out = &made.emplace(device, s).first->second;
  return {};
}

}  // namespace glabench::chunked
