// glabench compare BASE.json NEW.json: per-configuration verdicts and the regression gate.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <future>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "comparison_printer.hpp"
#include "option_checks.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"

namespace glabench::cli {
namespace {

struct compare_args {
  std::string base, next, json_out;
  std::optional<double> fail_pct;
  bool allow_missing = false;
  bool ignore_device = false;
  compare_options opts;
};

int run_compare(const compare_args& args) {
  if (!args.json_out.empty()) check_output_path(args.json_out, "--json");
  // The two files are read at once, on two threads; a bad BASE is reported first.
  auto base_read = std::async(std::launch::async, read_bench_results, args.base);
  std::optional<bench_results> next_read;
  std::exception_ptr next_error;
  try {
    next_read = read_bench_results(args.next);
  } catch (...) {
    next_error = std::current_exception();
  }
  bench_results base = base_read.get();
  if (next_error) std::rethrow_exception(next_error);
  bench_results& next = *next_read;
  // A bench stopped part-way leaves the rows it finished (context.incomplete): said on
  // stderr, since the rows it lacks count as missing.
  for (const auto& [path, r] : {std::pair{&args.base, &base}, std::pair{&args.next, &next}})
    if (const auto it = r->context.find("incomplete"); it != r->context.end() && it->is_string())
      fmt::print(stderr, "WARNING: {}: an incomplete run: {}\n", console_safe(*path),
                 console_safe(it->get<std::string>()));
  if (!args.ignore_device && results_device(base) != results_device(next))
    throw std::invalid_argument(fmt::format(
        "{}: context.device '{}' differs from {}: context.device '{}'; times from different "
        "devices are not comparable (pass --ignore-device to compare anyway)",
        args.base, results_device(base), args.next, results_device(next)));
  // A --backend that names no row of either file is a typo, not a comparison of nothing.
  for (const auto& name : args.opts.backends) {
    auto has = [&](const bench_results& r) {
      return std::any_of(r.rows.begin(), r.rows.end(),
                         [&](const bench_row& row) { return row.config.backend == name; });
    };
    if (!has(base) && !has(next))
      throw std::invalid_argument(fmt::format("--backend '{}': no row of {} or {} has this backend",
                                              name, args.base, args.next));
  }
  // (the rows are moved into the comparison: base and next are not used after this)
  const comparison c = compare_results(std::move(base), std::move(next), args.opts);
  std::optional<gate_verdict> gate;
  if (args.fail_pct) gate = judge_gate(c, {*args.fail_pct, args.allow_missing});
  // The JSON is made and written on a second thread while the markdown prints.
  std::future<void> json_written;
  if (!args.json_out.empty())
    json_written = std::async(std::launch::async, [&] {
      write_text_file(args.json_out, comparison_printer::json_text(c, gate));
    });
  comparison_printer::print_markdown(std::cout, c, gate);
  if (json_written.valid()) json_written.get();
  return gate ? gate->exit_code() : kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<compare_args>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "compare two bench results: FASTER / SLOWER / SAME per configuration");
  cmd->add_option("BASE", args->base, "baseline results JSON")->required();
  cmd->add_option("NEW", args->next, "new results JSON")->required();
  CLI::Option* gate =
      cmd->add_option(
             "--fail-on-regression", args->fail_pct,
             "exit 1 when a configuration is significantly slower by more than PCT percent, "
             "or fails where it passed, or a row timed in BASE is not timed in NEW, or no "
             "row is timed in both")
          ->check(option_checks::real(0, option_checks::end::closed, option_checks::kInf,
                                      option_checks::end::open, "a percentage"));
  cmd->add_flag("--allow-missing", args->allow_missing,
                "under --fail-on-regression, let rows timed in BASE be GONE or SKIPPED in NEW")
      ->needs(gate);
  cmd->add_option("--min-change", args->opts.min_change,
                  "relative change always called SAME on a GPU (run-to-run drift)")
      ->capture_default_str()
      ->check(option_checks::real(0, option_checks::end::closed, 1, option_checks::end::open,
                                  "a relative change; 1 would call every speed-up SAME"));
  cmd->add_option("--min-change-host", args->opts.min_change_host,
                  "the same for CPU backends, timed on the host")
      ->capture_default_str()
      ->check(option_checks::real(0, option_checks::end::closed, 1, option_checks::end::open,
                                  "a relative change; 1 would call every speed-up SAME"));
  cmd->add_option("--alpha", args->opts.alpha, "significance level of the U test")
      ->capture_default_str()
      ->check(option_checks::real(0, option_checks::end::open, 1, option_checks::end::open,
                                  "the U test's significance level"));
  cmd->add_option("--backend", args->opts.backends,
                  "compare only this backend's rows (repeatable; default: all)");
  cmd->add_flag("--ignore-device", args->ignore_device, "compare runs from different devices");
  cmd->add_option("--json", args->json_out, "write the comparison as JSON to this file");
  cmd->callback([args, &exit_code] { exit_code = run_compare(*args); });
}

}  // namespace glabench::cli
