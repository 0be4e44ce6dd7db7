// The launch's environment variables, read once per process (documented in knobs.hpp).
#include "knobs.hpp"

#include <cstdlib>

namespace glabench::parallel_scan {

int env_choice(const char* name, std::initializer_list<int> allowed) {
  const char* env = std::getenv(name);
  const int value = env ? std::atoi(env) : 0;
  for (const int choice : allowed)
    if (value == choice) return value;
  return 0;
}

int forced_width() {
  static const int width = env_choice("PARALLEL_SCAN_CUDA_WIDTH", {1, 2, 4});
  return width;
}

int forced_row_chunk() {
  static const int chunk = env_choice("PARALLEL_SCAN_CUDA_ROW_CHUNK", {8, 16});
  return chunk;
}

int forced_strip() {
  static const int strip = env_choice("PARALLEL_SCAN_CUDA_STRIP", {8, 16});
  return strip;
}

bool fp32_state64() {
  static const bool on = env_choice("PARALLEL_SCAN_CUDA_FP32_STATE", {64}) == 64;
  return on;
}

}  // namespace glabench::parallel_scan
