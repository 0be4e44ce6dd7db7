// --gates LIST for bench and decode-drift: the gate regimes (gate_regime.hpp) gla's g and
// rwkv6's w are drawn from, each run once per regime. Checked as it is read
// (option_checks::words): a regime's name, `all`, or a comma-separated list of them.
#include <fmt/format.h>

#include "commands.hpp"
#include "gate_regime.hpp"
#include "option_checks.hpp"

namespace glabench::cli {

void add_gates_option(CLI::App& cmd, std::vector<std::string>& gates) {
  std::vector<std::string> regime_words;
  std::string regime_help;
  for (const gate_regime& r : gate_regimes()) {
    regime_words.emplace_back(r.name);
    regime_help += fmt::format("; {}: {}", r.name, r.drawn);
  }
  regime_words.emplace_back("all");
  cmd.add_option("--gates", gates,
                 fmt::format("gate regime of gla's g and rwkv6's w, repeatable or a "
                             "comma-separated list; all: every regime (default: {}){}",
                             kDefaultGateRegime, regime_help))
      ->option_text("LIST")
      ->check(option_checks::words(regime_words, "gate regimes"));
}

void resolve_gates(std::vector<std::string>& out, const std::vector<std::string>& given) {
  // --gates all is every regime, in gate_regimes() order.
  std::vector<std::string> all_regimes;
  for (const gate_regime& r : gate_regimes()) all_regimes.emplace_back(r.name);
  option_checks::set_words(out, given, {"all", all_regimes});
}

}  // namespace glabench::cli
