// A packed batch's offsets (ABI 1.5's cu_seqlens, on the device) read to the host and
// checked: the backends that plan a packed batch's work on the host (chunked_fuse_cuda's
// call per sequence, ring_softmax_cuda's cuDNN block per sequence) read them in prepare(),
// outside timed calls. The read waits for the stream, so a CUDA graph cannot capture it:
// refused while the stream is capturing. Plain C++.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_error.hpp"

namespace glabench::cuda_plugin {

// The N + 1 offsets at `device` (int64 where `wide`, else int32) into `out`; empty on
// success, else why not: a CUDA error, or offsets that do not rise strictly from 0 to T.
inline status read_packed_offsets(const void* device, int64_t sequences, int64_t T, bool wide,
                                  cudaStream_t stream, std::vector<int64_t>* out) {
  if (!device) return "a packed batch without cu_seqlens";
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  GLABENCH_TRY_CUDA(cudaStreamIsCapturing(stream, &capturing), "cudaStreamIsCapturing");
  if (capturing != cudaStreamCaptureStatusNone)
    return "a packed batch reads cu_seqlens to the host, which a CUDA graph cannot capture";
  std::vector<int32_t> narrow(wide ? 0 : sequences + 1);
  out->assign(sequences + 1, 0);
  void* host = wide ? static_cast<void*>(out->data()) : static_cast<void*>(narrow.data());
  GLABENCH_TRY_CUDA(
      cudaMemcpyAsync(host, device, (sequences + 1) * (wide ? 8 : 4), cudaMemcpyDefault, stream),
      "cu_seqlens to the host");
  GLABENCH_TRY_CUDA(cudaStreamSynchronize(stream), "cu_seqlens to the host");
  if (!wide) std::copy(narrow.begin(), narrow.end(), out->begin());
  for (int64_t i = 0; i < sequences; ++i)
    if ((*out)[i + 1] <= (*out)[i])
      return "cu_seqlens must rise strictly (sequence " + std::to_string(i) + ")";
  if (out->front() != 0 || out->back() != T) return "cu_seqlens must run from 0 to T";
  return {};
}

}  // namespace glabench::cuda_plugin
