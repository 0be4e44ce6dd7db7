// A steady-clock timer for backends that run on the host: wall time between start()
// and stop_ms().
#pragma once

#include <chrono>

namespace glabench {

class cpu_timer {
 public:
  void start() { start_ = std::chrono::steady_clock::now(); }
  double stop_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace glabench
