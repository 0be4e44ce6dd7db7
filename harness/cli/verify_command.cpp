// glabench verify: every (backend, fixture, dtype) selected, checked per docs/design.md §5.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "backend_runner.hpp"
#include "commands.hpp"
#include "console_style.hpp"
#include "fixture.hpp"
#include "option_checks.hpp"
#include "progress_line.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"
#include "verify_printer.hpp"

namespace glabench::cli {
namespace {

// verify's --call-timeout unless one is given: a case of a committed fixture takes well
// under a second on a CPU, so a backend that hangs costs two minutes (twice: then its
// remaining cases are skipped), not the global default's ten.
constexpr double kVerifyCallTimeoutS = 120;

struct verify_args {
  std::vector<std::string> backends, ops, fixtures, dtypes;
  std::optional<double> tolerance;
  bool no_gradcheck = false;
  std::string json_out;
  std::string devices = "0";        // --devices
  fixture_read_options read;        // --max-fixture-bytes
  bool call_timeout_given = false;  // the global --call-timeout, given on the command line
};

// The dtypes to run a backend at for an op: those asked for, else every dtype it
// has a forward for.
std::vector<dtype> dtypes_for(const loaded_backend& b, op_kind op,
                              const std::vector<dtype>& asked) {
  return asked.empty() ? b.forward_dtypes(op) : asked;
}

int run_verify(const verify_args& args, const global_options& given) {
  // Everything is validated before anything runs, so bad input writes nothing.
  if (!args.json_out.empty()) check_output_path(args.json_out, "--json");
  const std::vector<dtype> dtypes = parse_dtypes(args.dtypes);
  const std::vector<op_kind> ops = parse_ops(args.ops);
  const std::vector<int32_t> devices = resolve_devices(args.devices);
  // verify's own default limit, for loading plugins as for every call.
  global_options global = given;
  if (!args.call_timeout_given) global.call_timeout_s = kVerifyCallTimeoutS;
  const backend_registry reg = global.discover();
  const std::vector<const loaded_backend*> backends = select_backends(reg, args.backends);

  std::vector<fixture> fixtures;
  for (const auto& path : expand_fixture_paths(args.fixtures)) {
    fixture f = read_fixture(path, args.read);
    if (ops.empty() || std::count(ops.begin(), ops.end(), f.prob.op))
      fixtures.push_back(std::move(f));
  }

  struct job {
    const loaded_backend* backend;
    const fixture* fix;
    dtype storage;
  };
  std::vector<job> jobs;
  for (const auto* b : backends)
    for (const auto& f : fixtures)
      for (dtype d : dtypes_for(*b, f.prob.op, dtypes)) jobs.push_back({b, &f, d});

  verify_options opts;
  opts.tolerance = args.tolerance;
  opts.gradcheck = !args.no_gradcheck;
  opts.devices = devices;
  std::vector<verify_case_result> results;
  {
    progress_line progress;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const job& j = jobs[i];
      progress.show(
          i + 1, jobs.size(),
          fmt::format("{} {} {}", j.backend->name(), j.fix->name(), dtype_name(j.storage)));
      results.push_back(global.isolation
                            ? global.isolation->verify(*j.backend, *j.fix, j.storage, opts)
                            : verify_case(*j.backend, *j.fix, j.storage, opts));
    }
  }
  verify_printer::print_table(std::cout, results, console_style(stdout));
  if (writes_results_file(args.json_out)) {
    write_json_file(args.json_out, verify_printer::to_json(results, backends));
    fmt::print("results written to {}\n", console_safe(args.json_out));
  }
  return verify_exit_code(results);
}

}  // namespace

void add_verify_command(CLI::App& app, const global_options& global, int& exit_code) {
  // The options live as long as the callback that reads them.
  auto args = std::make_shared<verify_args>();
  CLI::App* cmd =
      app.add_subcommand("verify", "check backends against the fp64 reference on fixtures");
  cmd->add_option("--backend", args->backends, "backend name (repeatable; default: all found)");
  cmd->add_option("--op", args->ops, "gla, rwkv6 or softmax_attn (repeatable; default: all)");
  cmd->add_option("--fixture", args->fixtures, "fixture file or folder (repeatable)")
      ->default_val(std::vector<std::string>{GLABENCH_SOURCE_DIR "/datasets/fixtures"});
  cmd->add_option("--dtype", args->dtypes,
                  "fp64, fp32, fp16 or bf16 (repeatable; default: all the backend has)");
  cmd->add_option("--tolerance", args->tolerance, "override the per-dtype rel_l2 threshold")
      ->check(option_checks::real(0, option_checks::end::closed, 1, option_checks::end::open,
                                  "a relative L2 error; 1 would pass an all-zero output"));
  cmd->add_flag("--no-gradcheck", args->no_gradcheck, "skip the finite-difference gradient check");
  add_devices_option(*cmd, args->devices);
  cmd->add_option("--json", args->json_out, "write the results as JSON to this file");
  add_max_fixture_bytes_option(*cmd, args->read);
  CLI::Option* call_timeout = app.get_option_no_throw("--call-timeout");
  const std::string limit_note =
      fmt::format("verify's default is {:g} s, not the global one", kVerifyCallTimeoutS);
  if (call_timeout)
    call_timeout->description(call_timeout->get_description() + " (" + limit_note + ")");
  cmd->footer(fmt::format(
      "A backend call, and the loading of a plugin, may run --call-timeout seconds (a global "
      "option, before 'verify'); {}. A backend that times out in {} cases in a row has its "
      "remaining cases skipped.",
      limit_note, kTimeoutsBeforeSkipping));
  cmd->callback([args, call_timeout, &global, &exit_code] {
    args->call_timeout_given = call_timeout && call_timeout->count() > 0;
    exit_code = run_verify(*args, global);
  });
}

}  // namespace glabench::cli
