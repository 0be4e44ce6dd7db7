#include "captured_call.hpp"

#include <string>

#if GLABENCH_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#endif

namespace glabench {

#if GLABENCH_WITH_CUDA

namespace {
std::string cuda_error_text(const char* call, cudaError_t status) {
  return std::string(call) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
         ")";
}
}  // namespace

captured_call::captured_call(void* stream, const std::function<void()>& call) : stream_(stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (const cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      e != cudaSuccess)
    throw graph_capture_error(cuda_error_text("cudaStreamBeginCapture", e));
  std::string failure;
  try {
    call();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Ended whatever happened: a stream left capturing would refuse every later call.
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  if (failure.empty() && ended != cudaSuccess)
    failure = cuda_error_text("cudaStreamEndCapture", ended);
  size_t nodes = 0;
  if (failure.empty() && graph) {
    if (const cudaError_t e = cudaGraphGetNodes(graph, nullptr, &nodes); e != cudaSuccess)
      failure = cuda_error_text("cudaGraphGetNodes", e);
    else if (nodes == 0)
      failure = "the call enqueued no work on the bench's stream";
  }
  cudaGraphExec_t exec = nullptr;
  if (failure.empty())
    if (const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0); e != cudaSuccess)
      failure = cuda_error_text("cudaGraphInstantiate", e);
  if (!failure.empty()) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // a failed capture's error is not sticky: clear it for later calls
    throw graph_capture_error(failure);
  }
  graph_ = graph;
  exec_ = exec;
}

captured_call::~captured_call() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
}

void captured_call::launch() {
  check_cuda(
      cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), static_cast<cudaStream_t>(stream_)),
      "cudaGraphLaunch");
}

#else

captured_call::captured_call(void* stream, const std::function<void()>&) : stream_(stream) {
  throw graph_capture_error("glabench was built without CUDA");
}
captured_call::~captured_call() = default;
void captured_call::launch() {}

#endif

}  // namespace glabench
