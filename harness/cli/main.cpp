// glabench: verification and benchmarking of Gated Linear Attention kernels.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "glabench/launcher.hpp"
#include "mpi_rendezvous.hpp"
#include "option_checks.hpp"
#include "python_backend.hpp"
#include "safe_text.hpp"

namespace glabench::cli {

backend_registry global_options::discover() const {
  std::vector<std::string> libs = backend_libs;
  if (!python_backends.empty()) {
    const std::string bridge = find_python_bridge(GLABENCH_DEFAULT_BACKEND_DIR);
    for (const auto& p : python_backends) libs.push_back(make_python_locator(p, bridge));
  }
  if (no_isolate) return discover_backends(GLABENCH_DEFAULT_BACKEND_DIR, libs);
  isolation = std::make_shared<backend_isolation>(isolation_options{call_timeout_s});
  return discover_backends(GLABENCH_DEFAULT_BACKEND_DIR, libs,
                           [this](const std::string& path) { return isolation->describe(path); });
}

}  // namespace glabench::cli

int main(int argc, char** argv) {
  using namespace glabench::cli;
  // The launcher's process, for the backends in this glabench's workers
  // (glabench/launcher.hpp): set once, by the glabench a launcher started.
  setenv(glabench::launcher::launcher_pid_variable, std::to_string(getppid()).c_str(), 0);
  setenv(glabench::launcher::started_variable, std::to_string(std::time(nullptr)).c_str(), 0);
  // A worker process (isolation.hpp): started by glabench itself, never by hand.
  if (argc == 2 && std::string(argv[1]) == "__worker") {
    try {
      return glabench::run_worker();
    } catch (const std::exception& e) {
      std::cerr << "glabench worker: " << e.what() << "\n";
      return 3;
    }
  }
  // Under mpirun (or srun with an MPI plugin), NCCL's unique id by MPI: rank 0 serves the
  // id store, every rank learns its address, before any worker starts. Only for the
  // commands that run backends (MPI_Init once a launched rank: `list` or `--help` in the
  // same job stay out of it).
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word != "bench" && word != "verify" && word != "decode-drift") continue;
    if (const auto r = glabench::share_id_store_by_mpi(); r.wanted && !r.used)
      std::cerr << "glabench: NCCL's unique id by the rendezvous file, not MPI: " << r.note << "\n";
    break;
  }
  CLI::App app{"glabench — verify and benchmark Gated Linear Attention kernels", "glabench"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("glabench ") + GLABENCH_VERSION);
  global_options global;
  app.add_option("--backend-lib", global.backend_libs,
                 "load this backend library as well (repeatable)");
  app.add_option("--python", global.python_backends,
                 "host a Python callable as backend NAME: NAME=package.module:function or "
                 "NAME=file.py:function (repeatable; docs/python.md)");
  app.add_flag("--no-isolate", global.no_isolate,
               "run backends in this process (for debuggers) instead of in worker processes");
  app.add_option("--call-timeout", global.call_timeout_s,
                 "seconds one backend call may run before its worker is killed (TIMEOUT)")
      ->capture_default_str()
      ->check(option_checks::real(0, option_checks::end::open, option_checks::kMaxSeconds,
                                  option_checks::end::closed, "seconds"));

  int exit_code = kExitOk;
  add_list_command(app, global, exit_code);
  add_fixtures_command(app, exit_code);
  add_verify_command(app, global, exit_code);
  add_bench_command(app, global, exit_code);
  add_decode_drift_command(app, global, exit_code);
  add_compare_command(app, exit_code);
  add_report_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  } catch (const std::exception& e) {
    // Messages quote plugins and file names: escaped (safe_text.hpp).
    std::cerr << "glabench: " << glabench::console_safe(e.what()) << "\n";
    return kExitBadInput;
  }
  return exit_code;
}
