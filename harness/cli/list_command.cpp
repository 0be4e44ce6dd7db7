// glabench list: every backend found, what it supports, and whether it can run here.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "abi_vocabulary.hpp"
#include "backend_runner.hpp"
#include "commands.hpp"
#include "device_context.hpp"
#include "dtype.hpp"
#include "safe_text.hpp"

namespace glabench::cli {
namespace {

std::string capabilities(const glabench_backend& t) {
  // op → dtype → "fwd" / "fwd+bwd"
  std::map<std::string, std::map<std::string, std::string>> table;
  for (size_t i = 0; i < t.num_capabilities; ++i) {
    const glabench_capability& c = t.capabilities[i];
    const std::string op(op_name(from_abi(c.op)));
    const auto d = from_dlpack(c.dtype);
    std::string& modes = table[op][d ? std::string(dtype_name(*d)) : "?"];
    modes += modes.empty() ? "" : "+";
    modes += mode_name(c.mode);
  }
  std::string out;
  for (const auto& [op, dtypes] : table) {
    out += fmt::format("\n    {:<13}", op);
    for (const auto& [d, modes] : dtypes) out += fmt::format(" {}({})", d, modes);
  }
  return out;
}

}  // namespace

void add_list_command(CLI::App& app, const global_options& global, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "list", "list the backends found, what they support, and why one cannot run here");
  cmd->callback([&global, &exit_code] {
    const backend_registry reg = global.discover();
    for (const auto& b : reg.backends) {
      const glabench_backend& t = *b.table;
      // The plugin's strings and the path are escaped (safe_text.hpp).
      const std::string features = feature_names(b.features());
      fmt::print("{} {} [{}] — {}\n  {}\n  built: {}{}{}\n", console_safe(t.name),
                 console_safe(t.version), t.device_type == kDLCUDA ? "cuda" : "cpu",
                 console_safe(global.isolation ? global.isolation->availability(b.path)
                                               : availability_here(b)),
                 console_safe(b.path), console_safe(b.build.summary()),
                 features.empty() ? "" : "\n  features: " + features, capabilities(t));
    }
    if (reg.backends.empty())
      fmt::print("no backends found (searched {} and GLABENCH_BACKEND_PATH)\n",
                 GLABENCH_DEFAULT_BACKEND_DIR);
    for (const auto& broken : reg.broken) fmt::print("not loaded: {}\n", console_safe(broken));
    exit_code = kExitOk;
  });
}

}  // namespace glabench::cli
