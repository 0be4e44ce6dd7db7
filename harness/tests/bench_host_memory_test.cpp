// bench's estimate of a configuration's host memory (bench_host_memory.hpp): what it
// counts, at the long shapes where it decides whether a run happens at all.
#include "bench_host_memory.hpp"

#include <boost/test/unit_test.hpp>

using namespace glabench;

namespace {

constexpr double kGiB = double(1 << 30);

problem gla(int64_t T) {
  problem p;
  p.op = op_kind::gla;
  p.B = 1, p.T = T, p.H = 16, p.K = 128, p.V = 128;
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bench_host_memory)

BOOST_AUTO_TEST_CASE(counts_the_inputs_snapshots_comparison_and_reference) {
  // B1 T2^20 H16 D128, bf16 fwd+bwd, in units of one fp64 token tensor (2^31 · 8 bytes =
  // 16 GiB): inputs q k v g d_o, 5; snapshots of o dq dk dv dg in bf16, 2 · 5 / 4; the
  // comparison, 2; the reference's two heads, 2 · (10 + 24) / 16 of a tensor. States are
  // 8 MiB each. So 1.25 · (5 + 2.5 + 2 + 4.25) · 16 GiB ≈ 275 GiB.
  const double need = bench_host_bytes(gla(1 << 20), 2, true, true) / kGiB;
  BOOST_TEST(need > 274.9);
  BOOST_TEST(need < 275.1);
}

BOOST_AUTO_TEST_CASE(the_forward_needs_less_and_both_grow_with_T) {
  for (bool backward : {false, true}) {
    const double at = bench_host_bytes(gla(1 << 18), 2, backward, backward);
    BOOST_TEST(bench_host_bytes(gla(1 << 19), 2, backward, backward) > 1.99 * at);
  }
  BOOST_TEST(bench_host_bytes(gla(1 << 20), 2, false, false) <
             0.7 * bench_host_bytes(gla(1 << 20), 2, true, true));
}

BOOST_AUTO_TEST_CASE(a_forward_beside_fwdbwd_rows_pays_for_the_reference_gradients) {
  // Bench's reference carries gradients once any fwdbwd mode runs: on two heads, 8 column
  // blocks' dq, dk, dg sums, 2 · 24 · T · K fp64 values (48 GiB at T2^20 K128), a quarter on.
  const double extra = bench_host_bytes(gla(1 << 20), 2, false, true) -
                       bench_host_bytes(gla(1 << 20), 2, false, false);
  BOOST_TEST(extra / kGiB > 59.9);
  BOOST_TEST(extra / kGiB < 60.1);
}

BOOST_AUTO_TEST_CASE(rwkv6_over_several_sequences_pays_for_a_head_of_each) {
  // The quick verify sums du over every sequence of a sampled head, the sequences' heads at
  // once, up to 16 of them: a head each, as the sampled two are counted (inputs and
  // outputs, 2 · T · (3K + 2V) fp64 values, and the gradient sums, 24 · T · K), a quarter
  // on, over gla's (u aside). Over 16 sequences du is not checked, and nothing is added.
  const double head = 1.25 * 8 * double(1 << 12) * (2 * (3 * 128 + 2 * 128) + 24 * 128);
  for (int64_t B : {1, 2, 16, 17}) {
    problem g = gla(1 << 12), r = gla(1 << 12);
    g.B = r.B = B;
    r.op = op_kind::rwkv6;
    const double extra = bench_host_bytes(r, 2, true, true) - bench_host_bytes(g, 2, true, true);
    const double want = B > 1 && B <= 16 ? B * head : 0;
    BOOST_TEST(extra >= want - 0.001 * head, "B" << B << " " << extra);
    BOOST_TEST(extra <= want + 0.001 * head, "B" << B << " " << extra);
  }
}

BOOST_AUTO_TEST_CASE(wider_storage_needs_more) {
  BOOST_TEST(bench_host_bytes(gla(1 << 16), 8, true, true) >
             bench_host_bytes(gla(1 << 16), 2, true, true));
}

BOOST_AUTO_TEST_SUITE_END()
