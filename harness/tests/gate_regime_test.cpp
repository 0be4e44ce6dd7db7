// The bench's gate regimes are drawn as named (gate_regime.hpp): each regime's moments on
// a large draw, and the cliff's exact zeros and −30s where it puts them.
#include "gate_regime.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numeric>

using namespace glabench;

namespace {

// Gates of a gla problem of T tokens, H heads, K features, drawn under the regime.
tensor gates_of(std::string_view regime, int64_t T, int64_t H, int64_t K) {
  const problem p{op_kind::gla, 1, T, H, K, 4, 0.5, true};
  random_problem_options o;
  o.gates = find_gate_regime(regime)->kind;
  o.seed = 7;
  return make_random_inputs(p, o).g;
}

double mean(const std::vector<double>& x) {
  return std::accumulate(x.begin(), x.end(), 0.0) / double(x.size());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_regime_draws)

BOOST_AUTO_TEST_CASE(named_in_order_and_found) {
  std::vector<std::string_view> names;
  for (const gate_regime& r : gate_regimes()) names.push_back(r.name);
  BOOST_TEST((names == std::vector<std::string_view>{"model", "mild", "fla", "strong", "cliff"}));
  BOOST_TEST((find_gate_regime(kDefaultGateRegime)->kind == gate_kind::logsigmoid));
  BOOST_TEST(find_gate_regime("gentle") == nullptr);
}

// Means of log σ(x) for x ~ N(μ,1) (from 10^7 draws): μ = 0 gives −0.806, μ = 2 −0.183;
// −exp(x) for x ~ N(−0.5,1) has mean −exp(0) = −1.
BOOST_AUTO_TEST_CASE(moments_as_named) {
  struct expected {
    std::string_view regime;
    double mean, tolerance;
  };
  for (const expected& e : {expected{"model", -0.806 / 16, 0.002}, expected{"mild", -0.183, 0.004},
                            expected{"fla", -0.806, 0.01}, expected{"strong", -1.0, 0.03}}) {
    const tensor g = gates_of(e.regime, 4096, 2, 16);
    BOOST_TEST(std::abs(mean(g.data) - e.mean) < e.tolerance, e.regime << " mean " << mean(g.data));
    for (double x : g.data) BOOST_TEST_REQUIRE(x <= 0.0);
  }
  // model's gates are fla's scaled by 1/16 — the same normals, so exactly.
  const tensor model = gates_of("model", 64, 2, 16), fla = gates_of("fla", 64, 2, 16);
  for (size_t i = 0; i < model.data.size(); ++i)
    BOOST_TEST_REQUIRE(model.data[i] == fla.data[i] / 16);
  // strong has the long tail: some gates below −10, none a mild regime draws.
  const tensor strong = gates_of("strong", 4096, 2, 16), mild = gates_of("mild", 4096, 2, 16);
  const auto below = [](const tensor& t, double x) {
    return std::count_if(t.data.begin(), t.data.end(), [x](double g) { return g < x; });
  };
  BOOST_TEST(below(strong, -10) > 0);
  BOOST_TEST(below(mild, -10) == 0);
}

BOOST_AUTO_TEST_CASE(cliff_puts_exact_zeros_and_resets_where_named) {
  const int64_t T = 200, H = 2, K = 24;
  const tensor g = gates_of("cliff", T, H, K), mild = gates_of("mild", T, H, K);
  int64_t zeros = 0, resets = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t k = 0; k < K; ++k) {
        const size_t at = size_t((t * H + h) * K + k);
        if (cliff_zero_feature(k)) {
          BOOST_TEST_REQUIRE(g.data[at] == 0.0);
          ++zeros;
        } else if (cliff_reset_token(t)) {
          BOOST_TEST_REQUIRE(g.data[at] == -30.0);
          ++resets;
        } else {
          BOOST_TEST_REQUIRE(g.data[at] == mild.data[at]);  // elsewhere, mild itself
        }
      }
  // Features 3, 11, 19 at every token; tokens 17, 70, 123, 176 at the other features.
  BOOST_TEST(zeros == T * H * 3);
  BOOST_TEST(resets == 4 * H * (K - 3));
}

BOOST_AUTO_TEST_SUITE_END()
