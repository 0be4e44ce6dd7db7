// Quantiles, summaries and the Mann-Whitney U test against values computed with numpy
// and scipy (numpy.quantile; scipy.stats.mannwhitneyu 1.17.1, method="auto").
#include "statistics.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>

using namespace glabench;

BOOST_AUTO_TEST_SUITE(statistics)

BOOST_AUTO_TEST_CASE(quantiles_interpolate_like_numpy) {
  const std::vector<double> xs = {3, 1, 4, 1, 5, 9, 2, 6};
  BOOST_TEST(quantile(xs, 0.2) == 1.4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(quantile(xs, 0.5) == 3.5, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(quantile(xs, 0.8) == 5.6, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(quantile({7.0}, 0.2) == 7.0);
  BOOST_CHECK_THROW(quantile({}, 0.5), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(summary_of_a_known_sample) {
  const sample_summary s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  BOOST_TEST(s.n == 8u);
  BOOST_TEST(s.median == 4.5);
  BOOST_TEST(s.min == 2.0);
  BOOST_TEST(s.max == 9.0);
  BOOST_TEST(s.mean == 5.0);
  // sample standard deviation: sqrt(32 / 7)
  BOOST_TEST(s.stddev == std::sqrt(32.0 / 7.0), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.cv == std::sqrt(32.0 / 7.0) / 5.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(summarize({3.0}).stddev == 0.0);
}

struct u_case {
  std::vector<double> a, b;
  double u, p;
  bool exact;
};

BOOST_AUTO_TEST_CASE(mann_whitney_matches_scipy) {
  const u_case cases[] = {
      // exact distribution (n < 8, no ties)
      {{1.0, 2.0, 3.5, 4.0, 5.0}, {2.5, 6, 7, 8, 9, 10}, 3.0, 0.030303030303030304, true},
      {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, 0.0, 0.007936507936507936, true},
      // normal approximation with tie and continuity correction
      {{1, 2, 2, 3, 4, 5, 5, 6, 7, 8},
       {3, 4, 5, 6, 6, 7, 8, 9, 9, 10, 11},
       23.0,
       0.02585951551109337,
       false},
      // normal approximation, no ties, both samples ≥ 8
      {{1.0, 1.11976, 1.242556, 1.36822, 1.496608, 1.627592, 1.761056, 1.896897, 2.035022, 2.175347,
        2.317793, 2.462289},
       {1.2, 1.3125, 1.425, 1.5375, 1.65, 1.7625, 1.875, 1.9875, 2.1},
       57.0,
       0.8589842960089598,
       false},
  };
  for (const auto& c : cases) {
    const mann_whitney_result r = mann_whitney_u(c.a, c.b);
    BOOST_TEST(r.u == c.u);
    BOOST_TEST(r.p_value == c.p, boost::test_tools::tolerance(1e-10));
    BOOST_TEST(r.exact == c.exact);
  }
}

BOOST_AUTO_TEST_CASE(mann_whitney_is_symmetric_and_handles_identical_samples) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b = {2.5, 3.5, 10, 11, 12, 13, 14, 15};
  BOOST_TEST(mann_whitney_u(a, b).p_value == mann_whitney_u(b, a).p_value,
             boost::test_tools::tolerance(1e-14));
  const std::vector<double> same(10, 1.0);
  BOOST_TEST(mann_whitney_u(same, same).p_value == 1.0);
}

BOOST_AUTO_TEST_SUITE_END()
