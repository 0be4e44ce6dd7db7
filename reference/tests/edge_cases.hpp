// The edge cases every part of the oracle is tested on (issue: T = 1, odd T, K ≠ V,
// K = 100, no decay, state reset, h0 and dht present and absent; strong gates).
#pragma once

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "glabench/reference/random_inputs.hpp"

namespace glabench::testing {

struct edge_case {
  std::string name;
  int64_t B, T, H, K, V;
  random_problem_options opts;
};

inline std::ostream& operator<<(std::ostream& os, const edge_case& c) {
  return os << c.name;
}

inline std::vector<edge_case> recurrent_edge_cases() {
  random_problem_options base;
  auto with = [&](auto change) {
    random_problem_options o = base;
    change(o);
    return o;
  };
  return {
      {"basic", 2, 12, 2, 8, 8, base},
      {"t1", 1, 1, 2, 4, 4, base},
      {"odd_t_k_ne_v", 1, 17, 1, 6, 10, base},
      {"k100", 1, 6, 1, 100, 12, base},
      {"no_decay", 1, 9, 2, 4, 5, with([](auto& o) { o.gates = gate_kind::zero; })},
      {"reset", 1, 9, 2, 4, 5, with([](auto& o) { o.gates = gate_kind::reset; })},
      {"no_h0", 2, 7, 1, 5, 3, with([](auto& o) { o.with_h0 = false; })},
      {"no_dht", 1, 7, 2, 3, 5, with([](auto& o) { o.with_dht = false; })},
      {"no_h0_no_dht", 1, 8, 1, 4, 4, with([](auto& o) { o.with_h0 = o.with_dht = false; })},
      // rows of g ≈ −160 (Σg ≈ −1e4 over a 64-token chunk), single −30s and exact 0s
      {"strong_gates", 1, 70, 1, 8, 4, with([](auto& o) { o.gates = gate_kind::strong; })},
  };
}

inline problem make_problem(op_kind op, const edge_case& c, bool causal = true) {
  problem p{op, c.B, c.T, c.H, c.K, c.V, 1.0 / std::sqrt(static_cast<double>(c.K)), causal};
  return p;
}

inline double rel_l2(const tensor& x, const tensor& r) {
  double num = 0, den = 0;
  for (size_t i = 0; i < r.data.size(); ++i) {
    num += (x.data[i] - r.data[i]) * (x.data[i] - r.data[i]);
    den += r.data[i] * r.data[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace glabench::testing
