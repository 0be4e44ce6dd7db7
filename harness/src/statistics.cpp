#include "statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace glabench {

namespace {

// The q-quantile of a sorted, non-empty sample, interpolated linearly.
double sorted_quantile(const std::vector<double>& xs, double q) {
  const double pos = q * double(xs.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (pos - double(lo)) * (xs[hi] - xs[lo]);
}

}  // namespace

double quantile(std::vector<double> xs, double q) {
  if (xs.empty()) throw std::invalid_argument("quantile of an empty sample");
  std::sort(xs.begin(), xs.end());
  return sorted_quantile(xs, q);
}

sample_summary summarize(const std::vector<double>& xs) {
  if (xs.empty()) throw std::invalid_argument("summary of an empty sample");
  sample_summary s;
  s.n = xs.size();
  // Sorted once for the three quantiles (compare summarizes every row it reads).
  std::vector<double> sorted = xs;
  std::sort(sorted.begin(), sorted.end());
  s.median = sorted_quantile(sorted, 0.5);
  s.p20 = sorted_quantile(sorted, 0.2);
  s.p80 = sorted_quantile(sorted, 0.8);
  s.min = *std::min_element(xs.begin(), xs.end());
  s.max = *std::max_element(xs.begin(), xs.end());
  s.mean = std::accumulate(xs.begin(), xs.end(), 0.0) / double(s.n);
  if (s.n > 1) {
    double ss = 0;
    for (double x : xs) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / double(s.n - 1));
  }
  s.cv = s.mean != 0 ? s.stddev / s.mean : 0;
  return s;
}

namespace {

// Number of arrangements giving each value of U for samples of sizes m and n without
// ties: the coefficients of the Gaussian binomial [m+n choose m](q), built as
// Π_{i=1..m} (1 − q^(n+i)) / (1 − q^i). Returned normalised to probabilities.
std::vector<double> exact_u_distribution(size_t m, size_t n) {
  const size_t top = m * n;
  std::vector<double> c(top + 1, 0.0);
  c[0] = 1;
  for (size_t i = 1; i <= m; ++i) {
    // multiply by (1 − q^(n+i)), from high degree down
    for (size_t d = top; d >= n + i; --d) c[d] -= c[d - (n + i)];
    // divide by (1 − q^i): c[d] += c[d − i], from low degree up
    for (size_t d = i; d <= top; ++d) c[d] += c[d - i];
  }
  const double total = std::accumulate(c.begin(), c.end(), 0.0);
  for (double& x : c) x /= total;
  return c;
}

}  // namespace

mann_whitney_result mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("Mann-Whitney U of an empty sample");
  const size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;

  // Mid-ranks of the pooled sample, and the tie term Σ (t³ − t).
  std::vector<std::pair<double, int>> pooled;
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double mid_rank = (double(i + 1) + double(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_a += mid_rank;
    const double t = double(j - i);
    tie_term += t * t * t - t;
    i = j;
  }

  mann_whitney_result r;
  r.u = rank_sum_a - double(n1) * double(n1 + 1) / 2;
  const double u_big = std::max(r.u, double(n1) * double(n2) - r.u);
  const bool ties = tie_term > 0;
  if (!ties && std::min(n1, n2) < 8) {
    // P(U ≥ u_big) under the null, doubled.
    const std::vector<double> pmf = exact_u_distribution(std::min(n1, n2), std::max(n1, n2));
    double tail = 0;
    for (size_t u = static_cast<size_t>(u_big); u < pmf.size(); ++u) tail += pmf[u];
    r.p_value = std::min(1.0, 2 * tail);
    r.exact = true;
    return r;
  }
  const double mu = double(n1) * double(n2) / 2;
  const double var =
      double(n1) * double(n2) / 12 * ((double(n) + 1) - tie_term / (double(n) * (double(n) - 1)));
  if (var <= 0) return r;  // every value equal: no evidence of a difference
  const double z = (u_big - mu - 0.5) / std::sqrt(var);
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

}  // namespace glabench
