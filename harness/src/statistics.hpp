// Sample statistics for timings and the Mann-Whitney U test used by `glabench compare`.
#pragma once

#include <cstddef>
#include <vector>

namespace glabench {

// Quantile of a sample by linear interpolation between order statistics (numpy's
// default, "type 7"): q in [0, 1]. Throws std::invalid_argument on an empty sample.
double quantile(std::vector<double> xs, double q);

struct sample_summary {
  size_t n = 0;
  double median = 0, p20 = 0, p80 = 0, min = 0, max = 0, mean = 0;
  double stddev = 0;  // sample standard deviation (n − 1); 0 for n = 1
  double cv = 0;      // stddev / mean
};
sample_summary summarize(const std::vector<double>& xs);

struct mann_whitney_result {
  double u = 0;        // U of the first sample: the number of pairs (a, b) with a > b, ties ½
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (small, tie-free samples) or normal approx.
};

// Two-sided Mann-Whitney U test, as scipy.stats.mannwhitneyu(a, b) computes it with
// method="auto": the exact distribution when either sample has fewer than 8 values and
// there are no ties, else the normal approximation with tie and continuity correction.
mann_whitney_result mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace glabench
