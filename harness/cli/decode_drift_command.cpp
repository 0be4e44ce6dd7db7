// glabench decode-drift: the chained-decode drift check (decode_drift.hpp) for every
// selected backend × op × gate regime × dtype, in workers as verify's cases are.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "bench_shapes.hpp"
#include "commands.hpp"
#include "console_style.hpp"
#include "decode_drift.hpp"
#include "decode_drift_printer.hpp"
#include "gate_regime.hpp"
#include "option_checks.hpp"
#include "progress_line.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"

namespace glabench::cli {
namespace {

// Steps at most: the chain's inputs are drawn whole, B·H·(3K + V) values per step.
constexpr int64_t kMaxSteps = 1'000'000;

struct decode_drift_args {
  std::vector<std::string> backends, ops, dtypes, gates;
  std::string shape = "4,4,64,64";  // --shape B,H,K,V
  std::string json_out;
  std::string devices = "0";  // --devices
  decode_drift_options opts;
};

struct job {
  const loaded_backend* backend;
  op_kind op;
  std::string gates;
  dtype storage;
};

int run_decode_drift_command(const decode_drift_args& args, const global_options& global) {
  // Everything is validated before anything runs, so bad input writes nothing.
  if (!args.json_out.empty()) check_output_path(args.json_out, "--json");
  const std::vector<dtype> dtypes = parse_dtypes(args.dtypes);
  std::vector<op_kind> ops = parse_ops(args.ops);
  for (const op_kind op : ops)
    if (op == op_kind::softmax_attn)
      throw std::invalid_argument(
          "--op 'softmax_attn' has no state to carry from one step to the next: decode-drift "
          "runs gla and rwkv6");
  decode_drift_options opts = args.opts;
  const std::vector<int64_t> sizes = parse_sizes(args.shape, "--shape", "B,H,K,V");
  opts.B = sizes[0];
  opts.H = sizes[1];
  opts.K = sizes[2];
  opts.V = sizes[3];
  if (!shape_in_range({opts.B, opts.steps, opts.H, opts.K, opts.V}))
    throw std::invalid_argument("--shape '" + args.shape + "' with --steps " +
                                std::to_string(opts.steps) +
                                ": B·steps·H·K·V must be at most 2^62 (sizes would overflow)");
  std::vector<std::string> gates{std::string(kDefaultGateRegime)};
  resolve_gates(gates, args.gates);
  opts.devices = resolve_devices(args.devices);
  const backend_registry reg = global.discover();  // outlives the run: backends live in it
  const std::vector<const loaded_backend*> backends = select_backends(reg, args.backends);

  // Ops asked for by name are run (unsupported where the backend lacks them); by default
  // only the ops the backend has, each in the dtypes asked for or else all it has.
  std::vector<job> jobs;
  for (const loaded_backend* b : backends)
    for (const op_kind op : ops.empty() ? std::vector{op_kind::gla, op_kind::rwkv6} : ops) {
      std::vector<dtype> run_at = dtypes.empty() ? b->forward_dtypes(op) : dtypes;
      if (run_at.empty() && ops.empty()) continue;
      if (run_at.empty()) run_at = {dtype::fp64};  // recorded as unsupported, with the reason
      for (const std::string& regime : gates)
        for (const dtype d : run_at) jobs.push_back({b, op, regime, d});
    }

  std::vector<decode_drift_result> results;
  {
    progress_line progress;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const job& j = jobs[i];
      progress.show(i + 1, jobs.size(),
                    fmt::format("{} {} {} gates-{}", j.backend->name(), op_name(j.op),
                                dtype_name(j.storage), j.gates));
      results.push_back(
          global.isolation
              ? global.isolation->decode_drift(*j.backend, j.op, j.storage, j.gates, opts)
              : run_decode_drift(*j.backend, j.op, j.storage, j.gates, opts));
    }
  }
  decode_drift_printer::print_table(std::cout, results, opts, console_style(stdout));
  if (!args.json_out.empty()) {
    write_json_file(args.json_out, decode_drift_printer::to_json(results, opts, gates, backends));
    fmt::print("results written to {}\n", console_safe(args.json_out));
  }
  std::vector<case_status> statuses;
  for (const auto& r : results) statuses.push_back(r.status);
  return cases_exit_code(statuses);
}

}  // namespace

void add_decode_drift_command(CLI::App& app, const global_options& global, int& exit_code) {
  // The options live as long as the callback that reads them.
  auto args = std::make_shared<decode_drift_args>();
  decode_drift_options& o = args->opts;
  namespace oc = option_checks;
  CLI::App* cmd = app.add_subcommand(
      "decode-drift",
      "decode token by token (T = 1, each step's h0 the last step's ht) and report how far o "
      "and the state drift from the fp64 chain");
  cmd->add_option("--backend", args->backends, "backend name (repeatable; default: all found)");
  cmd->add_option("--op", args->ops, "gla or rwkv6 (repeatable; default: those the backend has)");
  cmd->add_option("--dtype", args->dtypes,
                  "fp64, fp32, fp16 or bf16 (repeatable; default: all the backend has)");
  cmd->add_option("--shape", args->shape,
                  "the problem of each step, B,H,K,V: B sequences of H heads (T = 1)")
      ->capture_default_str();
  cmd->add_option("--steps", o.steps, "forward calls chained, one token each")
      ->capture_default_str()
      ->check(oc::whole<int64_t>(1, kMaxSteps));
  add_gates_option(*cmd, args->gates);
  cmd->add_option("--tolerance", o.tolerance,
                  "the limit on the largest rel_l2 of o and of the state over the steps "
                  "(default: verify's threshold of the dtype)")
      ->check(oc::real(0, oc::end::closed, 1, oc::end::open,
                       "a relative L2 error; 1 would pass an all-zero output"));
  cmd->add_option("--seed", o.seed, "seed of the random inputs")
      ->capture_default_str()
      ->check(oc::whole<uint64_t>());
  add_devices_option(*cmd, args->devices);
  cmd->add_option("--json", args->json_out, "write the results as JSON to this file");
  cmd->footer(
      "Each case draws B×H heads of `steps` tokens (q, k, v, the gates from --gates, u for "
      "rwkv6, a random h0), rounds them to the dtype (h0 to the backend's state dtype) and "
      "calls the backend's forward once per token, passing the ht it returned as the next "
      "h0, untouched. The fp64 oracle carries its state in fp64 on the same inputs. "
      "Reported: rel_l2 of each step's o and of the state after it, at steps 1, 4, 16, … "
      "and the last, and the largest over all steps. docs/decode_drift.md has more.");
  cmd->callback(
      [args, &global, &exit_code] { exit_code = run_decode_drift_command(*args, global); });
}

}  // namespace glabench::cli
