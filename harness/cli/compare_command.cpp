// glabench compare BASE.json NEW.json: per-configuration verdicts and the regression gate.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "comparison_printer.hpp"
#include "run_context.hpp"

namespace glabench::cli {
namespace {

struct compare_args {
  std::string base, next, json_out;
  std::optional<double> fail_pct;
  bool ignore_device = false;
  compare_options opts;
};

int run_compare(const compare_args& args) {
  const bench_results base = read_bench_results(args.base);
  const bench_results next = read_bench_results(args.next);
  if (!args.ignore_device && results_device(base) != results_device(next))
    throw std::invalid_argument(fmt::format(
        "{}: context.device '{}' differs from {}: context.device '{}'; times from different "
        "devices are not comparable (pass --ignore-device to compare anyway)",
        args.base, results_device(base), args.next, results_device(next)));
  const comparison c = compare_results(base, next, args.opts);
  comparison_printer::print_markdown(std::cout, c);
  if (!args.json_out.empty()) write_json_file(args.json_out, comparison_printer::to_json(c, args.fail_pct));
  if (!args.fail_pct) return kExitOk;
  const int code = regression_exit_code(c, *args.fail_pct);
  if (code)
    fmt::print("\nregression: a configuration is slower by more than {}% or lost correctness\n",
               *args.fail_pct);
  return code;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<compare_args>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "compare two bench results: FASTER / SLOWER / SAME per configuration");
  cmd->add_option("BASE", args->base, "baseline results JSON")->required();
  cmd->add_option("NEW", args->next, "new results JSON")->required();
  cmd->add_option("--fail-on-regression", args->fail_pct,
                  "exit 1 when a configuration is significantly slower by more than PCT percent, "
                  "or fails where it passed")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-change", args->opts.min_change,
                  "relative change always called SAME on a GPU (run-to-run drift)")
      ->capture_default_str();
  cmd->add_option("--min-change-host", args->opts.min_change_host,
                  "the same for CPU backends, timed on the host")
      ->capture_default_str();
  cmd->add_option("--alpha", args->opts.alpha, "significance level of the U test")
      ->capture_default_str();
  cmd->add_option("--backend", args->opts.backends,
                  "compare only this backend's rows (repeatable; default: all)");
  cmd->add_flag("--ignore-device", args->ignore_device, "compare runs from different devices");
  cmd->add_option("--json", args->json_out, "write the comparison as JSON to this file");
  cmd->callback([args, &exit_code] { exit_code = run_compare(*args); });
}

}  // namespace glabench::cli
