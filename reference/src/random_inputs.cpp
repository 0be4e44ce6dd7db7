#include "glabench/reference/random_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "glabench/reference/parallel_for.hpp"

namespace glabench {

namespace {

// splitmix64's word i of a seed: the mix of seed + (i + 1)·γ.
uint64_t splitmix_word(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// In (0, 1).
double uniform_of(uint64_t word) {
  return (static_cast<double>(word >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace

double normal_rng::normal_at(uint64_t n) const {
  const uint64_t word = n - n % 2;
  const double r = std::sqrt(-2.0 * std::log(uniform_of(splitmix_word(seed_, word))));
  const double phi = 2.0 * std::numbers::pi * uniform_of(splitmix_word(seed_, word + 1));
  return n % 2 ? r * std::sin(phi) : r * std::cos(phi);
}

void normal_rng::fill_normal(tensor& t, double stddev) {
  const uint64_t first = take(t.data.size());
  reference::for_blocks(t.data.size(),
                        [&](size_t i) { t.data[i] = stddev * normal_at(first + i); });
}

namespace {
double log_sigmoid(double x) {
  return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}
}  // namespace

op_inputs make_random_inputs(const problem& p, const random_problem_options& opts) {
  normal_rng rng(opts.seed);
  op_inputs in;
  const double qk_std = std::pow(static_cast<double>(p.K), -0.25);
  in.q = tensor(p.qk_shape());
  in.k = tensor(p.qk_shape());
  in.v = tensor(p.v_shape());
  rng.fill_normal(in.q, qk_std);
  rng.fill_normal(in.k, qk_std);
  rng.fill_normal(in.v);
  if (p.has_gate()) {
    in.g = tensor(p.qk_shape());
    // The token's place in its sequence, which the gate kinds that depend on it (mixed,
    // strong, reference_edges, cliff) read: in a packed batch each sequence counts from its own
    // start.
    std::vector<int64_t> position(p.T);
    for (int64_t t = 0; t < p.T; ++t) position[t] = t;
    for (size_t n = 0; n + 1 < p.cu_seqlens.size(); ++n)
      for (int64_t t = p.cu_seqlens[n]; t < p.cu_seqlens[n + 1] && t < p.T; ++t)
        position[t] = t - p.cu_seqlens[n];
    // Every gate kind but zero and reset draws one normal an element: element n's is
    // normal number first + n.
    const bool draws = opts.gates != gate_kind::zero && opts.gates != gate_kind::reset;
    const uint64_t first = rng.take(draws ? in.g.data.size() : 0);
    reference::for_blocks(in.g.data.size(), [&](size_t n) {
      const auto normal = [&] { return rng.normal_at(first + n); };
      double& g = in.g.data[n];
      const int64_t row = static_cast<int64_t>(n) % p.K,
                    token = position[static_cast<int64_t>(n) / (p.K * p.H) % p.T];
      switch (opts.gates) {
        case gate_kind::logsigmoid:
          g = log_sigmoid(normal() + 2.0);
          break;
        case gate_kind::zero:
          g = 0.0;
          break;
        case gate_kind::reset:
          g = -30.0;
          break;
        case gate_kind::mixed:
          g = log_sigmoid(normal() + 2.0);
          if (row / 16 % 3 == 1 && token % 11 == 3) g = -30.0;
          if (row / 16 % 3 == 2) g -= 7.0;
          break;
        case gate_kind::model:
          g = log_sigmoid(normal()) / 16.0;
          break;
        case gate_kind::fla:
          g = log_sigmoid(normal());
          break;
        case gate_kind::decay_tail:
          g = -std::exp(normal() - 0.5);
          break;
        case gate_kind::cliff:
          g = log_sigmoid(normal() + 2.0);
          if (cliff_reset_token(token)) g = -30.0;
          if (cliff_zero_feature(row)) g = 0.0;
          break;
        case gate_kind::reference_edges: {
          static constexpr double kSubChunkLog2[4][4] = {{-40, -10, -10, -10},
                                                         {-30, -30, -20, -20},
                                                         {-60, -5, -5, -5},
                                                         {-23.5, -23.5, -23.5, -23.5}};
          g = log_sigmoid(normal() + 2.0);
          if (row % 4 == 0) g = kSubChunkLog2[token / 64 % 4][token % 64 / 16] * std::log(2.0) / 16;
          break;
        }
        case gate_kind::strong: {
          static constexpr int64_t kResetAt[] = {7, 16, 47, 63, 0};
          g = log_sigmoid(normal() + 2.0);
          if (row % 4 == 1) g -= 160.0;
          if (row % 4 == 2 && token % 64 == kResetAt[row / 4 % 5]) g = -30.0;
          if (row % 4 == 3) g = 0.0;
          break;
        }
      }
    });
  }
  if (p.has_bonus()) {
    in.u = tensor(p.u_shape());
    rng.fill_normal(in.u, 0.5);
  }
  if (p.has_state() && opts.with_h0) {
    in.h0 = tensor(p.state_shape());
    rng.fill_normal(*in.h0);
  }
  if (opts.with_do) {
    in.d_o = tensor(p.v_shape());
    rng.fill_normal(*in.d_o);
    if (p.has_state() && opts.with_dht) {
      in.dht = tensor(p.state_shape());
      rng.fill_normal(*in.dht);
    }
  }
  return in;
}

}  // namespace glabench
