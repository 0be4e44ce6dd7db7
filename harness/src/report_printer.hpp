// `glabench report`: bench results as a markdown report — the context and peaks of each
// run, a table per run, the speed-up over a baseline backend — beside the PNG plots
// that scripts/plot_results.py draws with matplotlib.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "bench_results.hpp"

namespace glabench {

struct named_results {
  std::string path;
  bench_results results;
};

class report_printer {
 public:
  // The baseline for speed-ups when none is asked for: naive_recurrent if any run has
  // it, else the first backend name in sorted order ("" when there are no rows).
  static std::string default_baseline(const std::vector<named_results>& runs);

  // plots: plot name → PNG file name relative to the report, or "" with the reason in
  // missing_plots.
  static void print_markdown(std::ostream& out, const std::vector<named_results>& runs,
                             const std::string& baseline,
                             const std::map<std::string, std::string>& plots,
                             const std::map<std::string, std::string>& missing_plots);
};

}  // namespace glabench
