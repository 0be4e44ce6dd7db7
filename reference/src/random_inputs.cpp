#include "glabench/reference/random_inputs.hpp"

#include <cmath>
#include <numbers>
#include <vector>

namespace glabench {

uint64_t normal_rng::next_u64() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double normal_rng::uniform() {
  return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

double normal_rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double r = std::sqrt(-2.0 * std::log(uniform()));
  const double phi = 2.0 * std::numbers::pi * uniform();
  spare_ = r * std::sin(phi);
  has_spare_ = true;
  return r * std::cos(phi);
}

void normal_rng::fill_normal(tensor& t, double stddev) {
  for (double& x : t.data) x = stddev * normal();
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
    // strong, cliff) read: in a packed batch each sequence counts from its own start.
    std::vector<int64_t> position(p.T);
    for (int64_t t = 0; t < p.T; ++t) position[t] = t;
    for (size_t n = 0; n + 1 < p.cu_seqlens.size(); ++n)
      for (int64_t t = p.cu_seqlens[n]; t < p.cu_seqlens[n + 1] && t < p.T; ++t)
        position[t] = t - p.cu_seqlens[n];
    for (size_t n = 0; n < in.g.data.size(); ++n) {
      double& g = in.g.data[n];
      const int64_t row = static_cast<int64_t>(n) % p.K,
                    token = position[static_cast<int64_t>(n) / (p.K * p.H) % p.T];
      switch (opts.gates) {
        case gate_kind::logsigmoid:
          g = log_sigmoid(rng.normal() + 2.0);
          break;
        case gate_kind::zero:
          g = 0.0;
          break;
        case gate_kind::reset:
          g = -30.0;
          break;
        case gate_kind::mixed:
          g = log_sigmoid(rng.normal() + 2.0);
          if (row / 16 % 3 == 1 && token % 11 == 3) g = -30.0;
          if (row / 16 % 3 == 2) g -= 7.0;
          break;
        case gate_kind::model:
          g = log_sigmoid(rng.normal()) / 16.0;
          break;
        case gate_kind::fla:
          g = log_sigmoid(rng.normal());
          break;
        case gate_kind::decay_tail:
          g = -std::exp(rng.normal() - 0.5);
          break;
        case gate_kind::cliff:
          g = log_sigmoid(rng.normal() + 2.0);
          if (cliff_reset_token(token)) g = -30.0;
          if (cliff_zero_feature(row)) g = 0.0;
          break;
        case gate_kind::strong: {
          static constexpr int64_t kResetAt[] = {7, 16, 47, 63, 0};
          g = log_sigmoid(rng.normal() + 2.0);
          if (row % 4 == 1) g -= 160.0;
          if (row % 4 == 2 && token % 64 == kResetAt[row / 4 % 5]) g = -30.0;
          if (row % 4 == 3) g = 0.0;
          break;
        }
      }
    }
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
