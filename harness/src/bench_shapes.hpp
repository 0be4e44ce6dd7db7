// The problem shapes `glabench bench` runs: the named sets and --shape B,T,H,K,V.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glabench {

struct bench_shape {
  int64_t B, T, H, K, V;
};

// "seed", "fla" or "t-sweep"; throws std::invalid_argument naming the sets otherwise.
std::vector<bench_shape> shape_set(const std::string& name);
// "B,T,H,K,V" of positive integers; throws std::invalid_argument otherwise.
bench_shape parse_shape(const std::string& text);

}  // namespace glabench
