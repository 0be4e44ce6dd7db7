// A CUDA-event timer on one stream: the time the GPU spent between start() and
// stop_ms() on that stream — launch gaps included, host work before the first launch
// excluded. The one GPU timer of glabench: `glabench bench`, the peak measurements and
// the backends' tuning sweeps all time with it.
//
// The stream is a cudaStream_t passed as void* (nullptr: the default stream), so that
// code built without CUDA can name the type; in such a build the constructor throws.
#pragma once

#include <vector>

namespace glabench {

class cuda_timer {
 public:
  explicit cuda_timer(void* stream);
  ~cuda_timer();
  cuda_timer(const cuda_timer&) = delete;
  cuda_timer& operator=(const cuda_timer&) = delete;

  void start();      // records the start event on the stream
  double stop_ms();  // records the stop event, waits for it; milliseconds since start()

 private:
  void* stream_;
  void* start_ = nullptr;  // cudaEvent_t
  void* stop_ = nullptr;
};

// Times `work` (which enqueues on the timer's stream) `warmups` times untimed, then
// `reps` times; the samples in milliseconds, in run order. For fixed-count
// measurements (peak rates); `glabench bench` samples under a stopping_criterion.
template <typename Work>
std::vector<double> time_repeatedly(cuda_timer& timer, int warmups, int reps, Work&& work) {
  std::vector<double> ms;
  for (int i = 0; i < warmups + reps; ++i) {
    timer.start();
    work();
    const double t = timer.stop_ms();
    if (i >= warmups) ms.push_back(t);
  }
  return ms;
}

}  // namespace glabench
