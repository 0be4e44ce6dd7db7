// The glabench subcommands. Each add_*_command registers its options on the app and
// stores its exit code in `exit_code` when it runs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "backend_loader.hpp"

namespace glabench::cli {

// Exit codes shared by every command (docs/design.md §5).
inline constexpr int kExitOk = 0, kExitCheckFailed = 1, kExitBadInput = 2, kExitNothingRan = 77;

struct global_options {
  std::vector<std::string> backend_libs;  // --backend-lib
  backend_registry discover() const;      // default folder + GLABENCH_BACKEND_PATH + --backend-lib
};

void add_list_command(CLI::App& app, const global_options& global, int& exit_code);
void add_fixtures_command(CLI::App& app, int& exit_code);
void add_verify_command(CLI::App& app, const global_options& global, int& exit_code);
void add_bench_command(CLI::App& app, const global_options& global, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);

// Every *.h5 under each argument (a file or a folder), sorted within each folder.
std::vector<std::string> expand_fixture_paths(const std::vector<std::string>& args);

}  // namespace glabench::cli
