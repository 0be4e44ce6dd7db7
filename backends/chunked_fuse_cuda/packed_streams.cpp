// The packed batch's sequences side by side (packed_streams.hpp).
#include "packed_streams.hpp"

#include <algorithm>

#include "packed_order.hpp"
#include "side_streams.hpp"

namespace glabench::chunked::packed {
namespace {

using cuda_plugin::status;

constexpr size_t kAlign = 256;
constexpr int64_t kRoundingTokens = 128;  // a chunk of the longest walk, for each sequence

size_t aligned(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

size_t call_bytes(const call& c, bool backward, int64_t T) {
  return aligned(any_length_workspace_bytes(c.dtype, c.path, backward, T, c.H, c.K, c.V));
}

}  // namespace

size_t workspace_bytes(storage dtype, stages path, bool backward, int64_t T, int H, int K, int V) {
  call c{};
  c.dtype = dtype, c.path = path, c.H = H, c.K = K, c.V = V;
  const size_t one = call_bytes(c, backward, T);
  const size_t side = call_bytes(c, backward, T + kStreams * kRoundingTokens) +
                      kStreams * call_bytes(c, backward, kRoundingTokens);
  return std::max(one, side);
}

status run(const std::vector<int64_t>& at, const call& c, bool backward, void* workspace,
           size_t bytes, cudaStream_t stream, const sequence_launch& launch) {
  const int64_t n = int64_t(at.size()) - 1;
  const int streams = int(std::min<int64_t>(n, kStreams));
  const std::vector<std::vector<int64_t>> of = stream_order(at, streams);
  // Each stream's part: its longest sequence's workspace (its first, longest first).
  std::vector<size_t> part(streams, 0);
  size_t total = 0;
  for (int s = 0; s < streams; ++s) {
    part[s] = call_bytes(c, backward, at[of[s].front() + 1] - at[of[s].front()]);
    total += part[s];
  }
  if (streams <= 1 || total > bytes) {
    for (int64_t i = 0; i < n; ++i) GLABENCH_TRY_CUDA(launch(i, workspace, stream), "launch");
    return {};
  }
  side_streams* side = nullptr;
  GLABENCH_TRY(side_streams_of_device(&side));
  GLABENCH_TRY_CUDA(cudaEventRecord(side->fork, stream), "cudaEventRecord (fork)");
  char* base = static_cast<char*>(workspace);
  // Every stream that forked is joined back, even after a failed step, so that the
  // caller's stream (and a capture) never ends with a side stream left open; the first
  // failure is the one returned.
  status failed;
  const auto note = [&](cudaError_t e, const char* what) {
    if (e != cudaSuccess && failed.empty()) failed = cuda_plugin::cuda_error(e, what);
  };
  for (int s = 0; s < streams; ++s) {
    cudaStream_t to = side->streams[s];
    if (cudaError_t e = cudaStreamWaitEvent(to, side->fork, 0)) {
      note(e, "cudaStreamWaitEvent (fork)");
      break;
    }
    for (const int64_t i : of[s])
      if (failed.empty()) note(launch(i, base, to), "launch");
    base += part[s];
    cudaError_t e = cudaEventRecord(side->join[s], to);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(stream, side->join[s], 0);
    note(e, "join");
  }
  return failed;
}

}  // namespace glabench::chunked::packed
