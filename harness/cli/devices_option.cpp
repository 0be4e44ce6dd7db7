// --devices LIST for bench and verify: the devices each backend is given
// (glabench_problem.num_devices / device_ids, docs/design.md §3).
//
// Read strictly, as option_checks.hpp reads numbers: a comma-separated list of decimal
// device numbers, at least one, each ≥ 0 without sign or leading zeros, none twice. A bad
// list exits 2 before anything runs, naming --devices and the rule. Where CUDA finds
// devices, each number must also be one of them; where it finds none, CUDA backends are
// skipped as unavailable, as without the option. Without the option a process started by
// torchrun, mpirun or srun takes its node-local rank's device (glabench/launcher.hpp),
// others device 0.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "commands.hpp"
#include "device_context.hpp"
#include "glabench/launcher.hpp"

namespace glabench::cli {
namespace {

constexpr const char* kRule =
    "a comma-separated list of device numbers ≥ 0 (e.g. 0,1), at least one, none twice";

// The list, or why `text` is not one.
std::vector<int32_t> parse(const std::string& text, std::string* error) {
  std::vector<int32_t> ids;
  auto bad = [&](const std::string& why) {
    *error = fmt::format("'{}': must be {} ({})", text, kRule, why);
    return std::vector<int32_t>{};
  };
  if (text.empty()) return bad("it lists none");
  size_t start = 0;
  for (;;) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    int32_t id = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    const bool digits_only =
        !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits_only || ec != std::errc() || ptr != item.data() + item.size())
      return bad("'" + item + "' is not a device number");
    if (item.size() > 1 && item[0] == '0') return bad("'" + item + "' has a leading zero");
    if (std::find(ids.begin(), ids.end(), id) != ids.end())
      return bad(fmt::format("device {} is listed twice", id));
    ids.push_back(id);
    if (end == text.size()) break;
    start = end + 1;
  }
  return ids;
}

}  // namespace

void add_devices_option(CLI::App& cmd, std::string& devices) {
  // Under a launcher: the node-local rank's device, where this process sees that many (a
  // launcher that gives each task only its own GPU leaves it device 0).
  const launcher::place launched = launcher::launcher_place();
  if (launched.error.empty() && launched.world > 1 && launched.local_rank > 0 &&
      launched.local_rank < cuda_device_count(nullptr))
    devices = std::to_string(launched.local_rank);
  cmd.add_option("--devices", devices,
                 "the devices each backend is given, e.g. 0,1: a multi-GPU backend shards over "
                 "them, a single-GPU backend uses the first (which also holds the tensors and "
                 "is timed); a CPU backend runs on the host when one device is listed and is "
                 "skipped when more are (default: 0; under torchrun, mpirun or srun the "
                 "process's node-local rank)")
      ->option_text("LIST")
      ->check(CLI::Validator(
          [](std::string& text) {
            std::string error;
            parse(text, &error);
            return error;
          },
          kRule));
}

std::vector<int32_t> resolve_devices(const std::string& text) {
  // A launcher's variable that holds no rank leaves this process's place unknown.
  if (const launcher::place launched = launcher::launcher_place(); !launched.error.empty())
    throw std::invalid_argument(launched.launcher + "'s variables: " + launched.error);
  std::string error;
  const std::vector<int32_t> ids = parse(text, &error);
  if (!error.empty()) throw std::invalid_argument("--devices: " + error);
  // The default, device 0, is what every run had before the option: it needs no GPU here
  // (without one CUDA backends are skipped as unavailable), so CUDA is not asked.
  if (ids == std::vector<int32_t>{0}) return ids;
  const int count = cuda_device_count(nullptr);
  if (count > 0)
    for (const int32_t id : ids)
      if (id >= count)
        throw std::invalid_argument(fmt::format(
            "--devices: '{}': device {} is not present (this machine has {} CUDA device{}, "
            "0 to {})",
            text, id, count, count == 1 ? "" : "s", count - 1));
  return ids;
}

}  // namespace glabench::cli
