// The glabench subcommands. Each add_*_command registers its options on the app and
// stores its exit code in `exit_code` when it runs.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "backend_loader.hpp"
#include "fixture.hpp"
#include "isolation.hpp"

namespace glabench::cli {

// Exit codes shared by every command (docs/design.md §5).
inline constexpr int kExitOk = 0, kExitCheckFailed = 1, kExitBadInput = 2, kExitNothingRan = 77;

struct global_options {
  std::vector<std::string> backend_libs;  // --backend-lib
  // --python NAME=SPEC: Python callables hosted by the bridge (python_backend.hpp)
  std::vector<std::string> python_backends;
  bool no_isolate = false;      // --no-isolate: run backends in this process
  double call_timeout_s = 600;  // --call-timeout
  // The workers backends run in (null with --no-isolate); made by discover().
  mutable std::shared_ptr<backend_isolation> isolation;
  // Default folder + GLABENCH_BACKEND_PATH + --backend-lib + --python, each described by
  // a worker (or loaded here with --no-isolate).
  backend_registry discover() const;
};

void add_list_command(CLI::App& app, const global_options& global, int& exit_code);
void add_fixtures_command(CLI::App& app, int& exit_code);
void add_verify_command(CLI::App& app, const global_options& global, int& exit_code);
void add_bench_command(CLI::App& app, const global_options& global, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_decode_drift_command(CLI::App& app, const global_options& global, int& exit_code);

// --backend NAME... (selection_options.cpp): the backends named, else every one found;
// throws std::invalid_argument (exit 2) for a name not found, or when none is found.
std::vector<const loaded_backend*> select_backends(const backend_registry& reg,
                                                   const std::vector<std::string>& names);
// --op and --dtype values, in the order given, repeats dropped; throws
// std::invalid_argument (exit 2) naming the option, the value and the choices.
std::vector<op_kind> parse_ops(const std::vector<std::string>& names);
std::vector<dtype> parse_dtypes(const std::vector<std::string>& names);

// Every *.h5 under each argument (a file or a folder), sorted within each folder.
std::vector<std::string> expand_fixture_paths(const std::vector<std::string>& args);

// --max-fixture-bytes SIZE, into options.max_bytes (for every command that reads fixtures).
void add_max_fixture_bytes_option(CLI::App& cmd, fixture_read_options& options);

// Whether this process writes the results file `path` (bench, verify; launched_output.cpp):
// false for an empty path and, under a launcher, on every rank but 0 (said once on stdout).
bool writes_results_file(const std::string& path);

// --devices LIST (bench, verify; devices_option.cpp), into `devices` as text (default "0").
void add_devices_option(CLI::App& cmd, std::string& devices);
// The device numbers of --devices; throws std::invalid_argument (exit 2) naming --devices
// and the rule, also for a device this machine's CUDA does not have, or naming the
// launcher's variable that holds no rank (glabench/launcher.hpp).
std::vector<int32_t> resolve_devices(const std::string& devices);

// --gates LIST (bench, decode-drift; gates_option.cpp): gate regimes (gate_regime.hpp),
// repeatable or comma-separated, `all` for every regime; checked as it is read.
void add_gates_option(CLI::App& cmd, std::vector<std::string>& gates);
// `out` becomes the regimes --gates named, in order, repeats dropped, `all` expanded
// (unchanged when none was given).
void resolve_gates(std::vector<std::string>& out, const std::vector<std::string>& given);

}  // namespace glabench::cli
