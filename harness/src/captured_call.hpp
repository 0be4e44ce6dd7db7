// One call's device work captured once in a CUDA graph and launched as a whole, for
// `glabench bench --timing graph`: a sample is then one graph launch between the timer's
// events, the device's time for the work without the host's launches in it.
//
// The capture runs the call on the backend's stream in thread-local mode
// (cudaStreamCaptureModeThreadLocal): a backend that synchronizes, allocates or copies
// synchronously inside its call cannot be captured, and says so by the error its call
// returns. A call that leaves the capture with an error, that enqueues nothing on the
// stream (its work went elsewhere), or whose graph cannot be instantiated throws
// graph_capture_error: the bench records the row as not capturable, with the reason.
#pragma once

#include <functional>
#include <stdexcept>

namespace glabench {

class graph_capture_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class captured_call {
 public:
  // `stream`: a cudaStream_t. Throws graph_capture_error (also when glabench was built
  // without CUDA).
  captured_call(void* stream, const std::function<void()>& call);
  captured_call(const captured_call&) = delete;
  captured_call& operator=(const captured_call&) = delete;
  ~captured_call();
  // Enqueues the captured work on the stream.
  void launch();

 private:
  void* stream_;
  void* graph_ = nullptr;  // cudaGraph_t
  void* exec_ = nullptr;   // cudaGraphExec_t
};

}  // namespace glabench
