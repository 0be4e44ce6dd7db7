// glabench report RESULTS.json... --out DIR: report.md plus PNG plots drawn by
// scripts/plot_results.py (matplotlib). Everything is built in a fresh folder beside
// DIR and renamed to DIR only once complete; an existing DIR must be a glabench report
// folder, which is replaced whole (run_context.hpp: report_dir_refusal).
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "report_printer.hpp"
#include "run_context.hpp"
#include "safe_text.hpp"

namespace glabench::cli {
namespace {

namespace fs = std::filesystem;

struct report_args {
  std::vector<std::string> results;
  std::string out, baseline;
};

// Runs argv[0] (searched on PATH) and returns its exit status (127 if it cannot start).
int run_process(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int run_report(const report_args& args) {
  check_report_dir(args.out, "--out");
  // Each file is read once (a FIFO or `<(…)` cannot be read twice) and checked here; the
  // plot script is given what glabench understood of it, written again in glabench's own
  // form (names and medians from the fields and samples, unknown fields dropped), so it
  // draws whatever compare accepts and never meets a field it does not expect.
  std::vector<named_results> runs;
  std::vector<std::string> texts;
  for (const auto& path : args.results) {
    runs.push_back({path, bench_results_from_text(read_results_text(path), path)});
    texts.push_back(to_json(runs.back().results).dump());
  }
  const std::string baseline =
      args.baseline.empty() ? report_printer::default_baseline(runs) : args.baseline;

  const std::string python = env_or("GLABENCH_PYTHON", "python3");
  const std::string script =
      env_or("GLABENCH_PLOT_SCRIPT", GLABENCH_SOURCE_DIR "/scripts/plot_results.py");
  if (!fs::exists(script)) throw std::runtime_error(script + ": the plot script is missing");
  if (run_process({python, "-c", "import matplotlib"}) != 0)
    throw std::runtime_error(python +
                             " cannot import matplotlib; run scripts/setup.sh or set "
                             "GLABENCH_PYTHON to a Python that has it");

  // Built in a fresh folder of its own beside --out (deleted on any failure), then
  // renamed into place in one step: see staged_dir in run_context.hpp.
  staged_dir staged(args.out);
  const fs::path scratch(staged.path());
  {
    std::vector<std::string> argv = {python,           script,       "--out",
                                     scratch.string(), "--baseline", baseline};
    const fs::path inputs = scratch / "inputs";
    fs::create_directory(inputs);
    for (size_t i = 0; i < texts.size(); ++i) {
      const fs::path copy = inputs / fmt::format("{}.json", i);
      std::ofstream out(copy, std::ios::binary);
      out << texts[i];
      if (!out) throw std::runtime_error(copy.string() + ": cannot write");
      argv.push_back(copy.string());
    }
    const int status = run_process(argv);
    fs::remove_all(inputs);
    if (status != 0) throw std::runtime_error(script + " failed (its error is above)");

    std::map<std::string, std::string> plots, missing;
    std::ifstream manifest_file(scratch / "plots.json");
    const nlohmann::json manifest = nlohmann::json::parse(manifest_file);
    for (const auto& [name, entry] : manifest.items()) {
      if (entry["file"].is_string())
        plots[name] = entry["file"].get<std::string>();
      else
        missing[name] = entry["reason"].get<std::string>();
    }
    std::ofstream md(scratch / "report.md");
    report_printer::print_markdown(md, runs, baseline, plots, missing);
    md.close();
    if (!md) throw std::runtime_error((scratch / "report.md").string() + ": cannot write");
  }
  staged.publish();
  fmt::print("report written to {}\n", console_safe((fs::path(args.out) / "report.md").string()));
  return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<report_args>();
  CLI::App* cmd =
      app.add_subcommand("report", "markdown report and matplotlib plots from bench results");
  cmd->add_option("RESULTS", args->results, "bench results JSON files")->required();
  cmd->add_option("--out", args->out, "folder for report.md and the PNGs")->required();
  cmd->add_option("--baseline", args->baseline,
                  "backend the speed-ups are relative to (default: naive_recurrent if present)");
  cmd->callback([args, &exit_code] { exit_code = run_report(*args); });
}

}  // namespace glabench::cli
