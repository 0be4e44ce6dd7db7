#include "gate_regime.hpp"

#include <array>

namespace glabench {

namespace {
constexpr std::array kRegimes = {
    gate_regime{"model", gate_kind::model, "log σ(x)/16, x ~ N(0,1)"},
    gate_regime{"mild", gate_kind::logsigmoid, "log σ(x), x ~ N(2,1)"},
    gate_regime{"fla", gate_kind::fla, "log σ(x), x ~ N(0,1)"},
    gate_regime{"strong", gate_kind::decay_tail, "−exp(x), x ~ N(−0.5,1)"},
    gate_regime{"cliff", gate_kind::cliff,
                "log σ(x), x ~ N(2,1); −30 at tokens t % 53 = 17; 0 at features k % 8 = 3"},
};
}  // namespace

std::span<const gate_regime> gate_regimes() {
  return kRegimes;
}

const gate_regime* find_gate_regime(std::string_view name) {
  for (const gate_regime& r : kRegimes)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace glabench
