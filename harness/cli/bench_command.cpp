// glabench bench: time every backend × op × shape × dtype × mode (see bench_runner.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "bench_printer.hpp"
#include "bench_runner.hpp"
#include "commands.hpp"
#include "console_style.hpp"
#include "option_checks.hpp"
#include "progress_line.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"

namespace glabench::cli {
namespace {

struct bench_args {
  std::vector<std::string> backends, ops, shape_sets, shapes, dtypes, modes, masks, gates, timings;
  std::string json_out;
  std::string devices = "0";  // --devices
  bench_options opts;
};

bench_options resolve(const bench_args& args, const backend_registry& reg) {
  bench_options o = args.opts;
  o.backends = select_backends(reg, args.backends);
  o.ops = parse_ops(args.ops);
  o.dtypes = parse_dtypes(args.dtypes);
  for (const auto& mode : args.modes)
    if (mode != "fwd" && mode != "fwdbwd")
      throw std::invalid_argument("--mode '" + mode + "' is not one of fwd, fwdbwd");
  if (!args.modes.empty()) {
    o.modes.clear();
    for (const auto& mode : args.modes)
      if (std::find(o.modes.begin(), o.modes.end(), mode) == o.modes.end()) o.modes.push_back(mode);
  }
  // --mask, --gates and --timing: each value checked as it was read (option_checks::words).
  option_checks::set_words(o.masks, args.masks);
  resolve_gates(o.gates, args.gates);
  option_checks::set_words(o.timings, args.timings);
  for (const auto& set : args.shape_sets)
    for (const auto& s : shape_set(set)) o.shapes.push_back(s);
  for (const auto& text : args.shapes) o.shapes.push_back(parse_shape(text));
  if (o.shapes.empty()) o.shapes = shape_set("seed");
  // Each option's own range is checked as it is read (option_checks.hpp); this is the
  // rule between two of them.
  if (o.stopping.max_reps < o.stopping.min_reps)
    throw std::invalid_argument(fmt::format("--min-reps {} must be ≤ --max-reps {}",
                                            o.stopping.min_reps, o.stopping.max_reps));
  o.devices = resolve_devices(args.devices);
  return o;
}

int run_bench_command(const bench_args& args, const global_options& global) {
  // Everything is validated before anything runs, so bad input writes nothing.
  if (!args.json_out.empty()) check_output_path(args.json_out, "--json");
  const backend_registry reg = global.discover();  // outlives the run: backends live in it
  bench_options opts = resolve(args, reg);
  progress_line progress;
  if (progress.enabled())
    opts.progress = [&progress](size_t i, size_t n, const std::string& what) {
      progress.show(i, n, what);
    };
  const std::vector<bench_config> planned = planned_configs(opts);
  bench_printer table(stdout, planned, console_style(stdout));
  const bool write_json = writes_results_file(args.json_out);
  if (write_json)
    opts.results_so_far = [&](const bench_results& so_far) {
      if (so_far.rows.size() == planned.size()) return;  // the whole file follows
      nlohmann::json j = to_json(so_far);
      j["context"]["incomplete"] = fmt::format(
          "{} of {} configurations: written after each one, and the run ended before the rest",
          so_far.rows.size(), planned.size());
      write_json_file(args.json_out, j);
    };
  opts.row_done = [&](const bench_row& row) {
    progress.clear();  // stdout and stderr may share the terminal
    table.row(row);
    std::fflush(stdout);
  };
  if (global.isolation) {
    // A call is stopped past --call-timeout, and in bench also past 10 × --max-call-seconds
    // (at least 30 s): a configuration slower than that would be skipped anyway.
    const double limit = std::min(global.call_timeout_s, std::max(10 * opts.max_call_s, 30.0));
    opts.run_isolated = [&global, limit](const loaded_backend& b, const nlohmann::json& request) {
      return global.isolation->bench(b, request, limit);
    };
  }
  const bench_results results = run_bench(opts);
  progress.clear();
  table.finish();
  // Times from a build without optimisation mislead: said on stderr, where a redirected
  // table does not hide it, and recorded in the results (context.warnings).
  const console_style err_style(stderr);
  if (const auto w = results.context.find("warnings"); w != results.context.end())
    for (const auto& text : *w)
      fmt::print(stderr, "{}\n",
                 err_style.paint("WARNING: " + console_safe(text.get<std::string>()), tone::bad));
  if (write_json) {
    write_json_file(args.json_out, to_json(results));
    fmt::print("results written to {}\n", console_safe(args.json_out));
  }
  if (table.failed()) return kExitCheckFailed;
  return table.timed() ? kExitOk : kExitNothingRan;
}

}  // namespace

void add_bench_command(CLI::App& app, const global_options& global, int& exit_code) {
  auto args = std::make_shared<bench_args>();
  bench_options& o = args->opts;
  CLI::App* cmd = app.add_subcommand(
      "bench", "time backends (each configuration verified first) and write results JSON");
  cmd->add_option("--backend", args->backends, "backend name (repeatable; default: all found)");
  cmd->add_option("--op", args->ops,
                  "gla, rwkv6 or softmax_attn (repeatable; default: all the backend has)");
  cmd->add_option("--shapes", args->shape_sets,
                  "shape set: seed, fla, t-sweep, decode or packed (repeatable)");
  cmd->add_option("--shape", args->shapes,
                  "one shape B,T,H,K,V, or a packed batch 1,T,H,K,V:L1+L2+… whose sequence "
                  "lengths sum to T (repeatable)");
  cmd->add_option("--dtype", args->dtypes,
                  "fp64, fp32, fp16 or bf16 (repeatable; default: all the backend has)");
  cmd->add_option("--mode", args->modes, "fwd or fwdbwd (repeatable; default: both)");
  namespace oc = option_checks;
  cmd->add_option("--mask", args->masks,
                  "softmax_attn's attention mask: causal or full (no mask), repeatable or a "
                  "comma-separated list; each softmax_attn configuration runs once per mask "
                  "(default: causal). Ignored for gla and rwkv6, which are causal")
      ->option_text("LIST")
      ->check(oc::words({"causal", "full"}, "softmax_attn's masks"));
  add_gates_option(*cmd, args->gates);
  cmd->add_option("--timing", args->timings,
                  "eager: time the backend's calls as they come (host launches included); "
                  "graph: capture each call in a CUDA graph once and time its launches "
                  "(device time). Repeatable or a comma-separated list (default: eager)")
      ->option_text("LIST")
      ->check(oc::words({"eager", "graph"}, "timing modes"));
  cmd->add_flag("--hot", o.hot, "keep the caches warm: no flush between samples");
  add_devices_option(*cmd, args->devices);
  cmd->add_option("--noise-target", o.stopping.noise_target, "stop sampling when cv ≤ this")
      ->capture_default_str()
      ->check(oc::real(0, oc::end::open, 1, oc::end::closed,
                       "a coefficient of variation: 0.005 is 0.5%"));
  cmd->add_option("--min-reps", o.stopping.min_reps, "samples before the noise target counts")
      ->capture_default_str()
      ->check(oc::whole<int>(1, oc::kMaxReps));
  cmd->add_option("--max-reps", o.stopping.max_reps, "samples at most")
      ->capture_default_str()
      ->check(oc::whole<int>(1, oc::kMaxReps));
  cmd->add_option("--time-cap", o.stopping.time_cap_s,
                  "seconds of sampling per configuration (≥ 5 samples)")
      ->capture_default_str()
      ->check(oc::real(0, oc::end::open, oc::kMaxSeconds, oc::end::closed, "seconds"));
  cmd->add_option("--max-call-seconds", o.max_call_s,
                  "skip a configuration whose warm call takes longer (its first call, which may "
                  "compile or autotune, is held to --call-timeout only)")
      ->capture_default_str()
      ->check(oc::real(0, oc::end::open, oc::kMaxSeconds, oc::end::closed, "seconds"));
  cmd->add_option("--warmup", o.warmup, "untimed calls before sampling")
      ->capture_default_str()
      ->check(oc::whole<int>(0, oc::kMaxReps));
  cmd->add_option("--seed", o.seed, "seed of the random inputs")
      ->capture_default_str()
      ->check(oc::whole<uint64_t>());
  cmd->add_option("--json", args->json_out, "write the results as JSON to this file");
  cmd->callback([args, &global, &exit_code] { exit_code = run_bench_command(*args, global); });
}

}  // namespace glabench::cli
