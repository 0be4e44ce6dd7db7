// The bench's gate regimes (`glabench bench --gates`): named distributions that gla's g
// and rwkv6's w are drawn from. A kernel's speed can depend on its gates, so a bench
// row records the regime its inputs came from, in its configuration (compare never
// pairs two regimes) and in its name (".../gates-fla").
//
//   model   log σ(x) / 16, x ~ N(0,1)   GLA's gate-logit normaliser: slow decay
//   mild    log σ(x),      x ~ N(2,1)   the default, and every row written before regimes
//   fla     log σ(x),      x ~ N(0,1)   fla's own benchmarks and tests
//   strong  −exp(x),       x ~ N(−0.5,1) decays with a long tail
//   cliff   mild, with −30 at every feature of some tokens and whole features at exactly 0
//
// The draws themselves are the reference's (random_inputs.hpp, gate_kind).
#pragma once

#include <span>
#include <string_view>

#include "glabench/reference/random_inputs.hpp"

namespace glabench {

struct gate_regime {
  std::string_view name;
  gate_kind kind;
  std::string_view drawn;  // the distribution, in words
};

// The regimes in order of increasing decay, the cliff last: what --gates all runs.
std::span<const gate_regime> gate_regimes();
// The regime of that name, or nullptr.
const gate_regime* find_gate_regime(std::string_view name);

inline constexpr std::string_view kDefaultGateRegime = "mild";

}  // namespace glabench
