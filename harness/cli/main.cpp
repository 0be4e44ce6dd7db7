// glabench: verification and benchmarking of Gated Linear Attention kernels.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"

namespace glabench::cli {

backend_registry global_options::discover() const {
  return discover_backends(GLABENCH_DEFAULT_BACKEND_DIR, backend_libs);
}

}  // namespace glabench::cli

int main(int argc, char** argv) {
  using namespace glabench::cli;
  CLI::App app{"glabench — verify and benchmark Gated Linear Attention kernels", "glabench"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("glabench ") + GLABENCH_VERSION);
  global_options global;
  app.add_option("--backend-lib", global.backend_libs,
                 "load this backend library as well (repeatable)");

  int exit_code = kExitOk;
  add_list_command(app, global, exit_code);
  add_fixtures_command(app, exit_code);
  add_verify_command(app, global, exit_code);
  add_bench_command(app, global, exit_code);
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
    std::cerr << "glabench: " << e.what() << "\n";
    return kExitBadInput;
  }
  return exit_code;
}
