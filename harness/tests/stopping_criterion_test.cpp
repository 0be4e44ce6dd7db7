// The stopping criterion and the sampling loop on synthetic sample streams: when each
// rule stops sampling, and what take_samples does between samples.
#include "stopping_criterion.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "bench_device.hpp"
#include "rank_agreement.hpp"
#include "statistics.hpp"

using namespace glabench;

namespace {

// Feeds `samples` (elapsed time i · seconds_per_sample) until the criterion stops;
// the number of samples it took.
size_t run(stopping_criterion& stop, const std::vector<double>& samples,
           double seconds_per_sample = 0) {
  for (size_t i = 0; i < samples.size(); ++i)
    if (stop.add(samples[i], double(i + 1) * seconds_per_sample)) return i + 1;
  return samples.size();
}

std::vector<double> alternating(size_t n, double a, double b) {
  std::vector<double> xs;
  for (size_t i = 0; i < n; ++i) xs.push_back(i % 2 ? b : a);
  return xs;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stopping)

BOOST_AUTO_TEST_CASE(a_steady_stream_stops_at_min_reps_on_the_noise_target) {
  stopping_criterion stop({0.005, 10, 500, 1.0});
  BOOST_TEST(run(stop, std::vector<double>(100, 2.0)) == 10u);
  BOOST_TEST(stop.noise_target_met());
  BOOST_TEST((stop.reason() == stop_reason::noise_target));
  BOOST_TEST(stop.samples().size() == 10u);
  BOOST_TEST(stop.cv() == 0.0);
}

BOOST_AUTO_TEST_CASE(the_noise_test_waits_for_the_cv_to_fall) {
  // One outlier, then a steady stream: the cv falls under 1% only once enough steady
  // samples dilute it; the criterion stops at the first such sample, not before.
  std::vector<double> xs = {1.5};
  for (int i = 0; i < 10000; ++i) xs.push_back(1.0);
  stopping_criterion stop({0.01, 3, 100000, 1e9});
  const size_t n = run(stop, xs);
  BOOST_TEST(stop.noise_target_met());
  const auto cv_of_first = [&](size_t k) {
    return summarize(std::vector<double>(xs.begin(), xs.begin() + long(k))).cv;
  };
  BOOST_TEST(cv_of_first(n) <= 0.01);
  BOOST_TEST(cv_of_first(n - 1) > 0.01);
  BOOST_TEST(n > 100u);
}

BOOST_AUTO_TEST_CASE(a_noisy_stream_stops_at_max_reps) {
  stopping_criterion stop({0.005, 10, 40, 1.0});
  BOOST_TEST(run(stop, alternating(1000, 1.0, 2.0)) == 40u);
  BOOST_TEST(!stop.noise_target_met());
  BOOST_TEST((stop.reason() == stop_reason::max_reps));
}

BOOST_AUTO_TEST_CASE(the_time_cap_needs_five_samples) {
  // 0.4 s a sample against a 1 s cap: the cap passes at the 3rd sample, but the
  // criterion takes 5 (the fewest the compare's U test runs on).
  stopping_criterion stop({0.005, 10, 500, 1.0});
  BOOST_TEST(run(stop, alternating(1000, 1.0, 2.0), 0.4) == 5u);
  BOOST_TEST((stop.reason() == stop_reason::time_cap));
  // Slower samples than the cap still get five.
  stopping_criterion slow({0.005, 10, 500, 1.0});
  BOOST_TEST(run(slow, alternating(1000, 1.0, 2.0), 10.0) == 5u);
}

BOOST_AUTO_TEST_CASE(the_noise_target_is_not_met_before_min_reps) {
  stopping_criterion stop({0.5, 10, 500, 1e9});
  const std::vector<double> steady(9, 1.0);
  BOOST_TEST(run(stop, steady) == 9u);
  BOOST_TEST((stop.reason() == stop_reason::not_yet));
  BOOST_TEST(stop.add(1.0, 0));
  BOOST_TEST(stop.noise_target_met());
}

BOOST_AUTO_TEST_CASE(a_single_sample_limit_and_adds_after_the_stop) {
  stopping_criterion one({0.005, 10, 1, 1.0});
  BOOST_TEST(one.add(3.0, 0));
  BOOST_TEST((one.reason() == stop_reason::max_reps));
  BOOST_TEST(one.cv() == 0.0);  // the noise test needs two samples
  BOOST_TEST(one.add(4.0, 0));  // stopped: nothing more is recorded
  BOOST_TEST(one.samples().size() == 1u);
  BOOST_TEST(std::string(stop_reason_name(one.reason())) == "max reps");
}

// A bench_device that hands out a scripted stream of times and counts what it is asked.
class scripted_device final : public bench_device {
 public:
  explicit scripted_device(std::vector<double> times) : times_(std::move(times)) {}
  void start() override { log += "s"; }
  double stop_ms() override {
    log += "e";
    return times_.at(next_++);
  }
  void flush_caches() override { log += "f"; }
  void synchronize() override { log += "|"; }
  size_t free_bytes() const override { return 0; }
  std::string log;

 private:
  std::vector<double> times_;
  size_t next_ = 0;
};

BOOST_AUTO_TEST_CASE(take_samples_warms_up_flushes_and_times_each_call) {
  scripted_device dev(std::vector<double>(20, 1.0));
  stopping_criterion stop({0.005, 3, 500, 1e9});
  std::vector<size_t> seen;
  take_samples(
      dev, stop, 2, false, [&] { dev.log += "b"; }, [&] { dev.log += "c"; },
      [&](size_t n, double) { seen.push_back(n); }, [](bool, bool may) { return may; });
  // Two flushed warm-ups, a wait, then before / flush / start / call / stop per sample.
  BOOST_TEST(dev.log == "fcfc|bfscebfscebfsce");
  BOOST_TEST(stop.samples().size() == 3u);
  BOOST_TEST((seen == std::vector<size_t>{1, 2, 3}));
}

BOOST_AUTO_TEST_CASE(take_samples_hot_skips_the_flushes) {
  scripted_device dev(std::vector<double>(20, 1.0));
  stopping_criterion stop({0.005, 2, 500, 1e9});
  take_samples(dev, stop, 1, true, [&] { dev.log += "c"; });
  BOOST_TEST(dev.log == "c|scesce");
}

// Across processes the stop is decided by all ranks: sampling goes on while another rank's
// noise target is unmet (here until the fifth sample), and stops at once where a rank
// must (its max reps).
BOOST_AUTO_TEST_CASE(take_samples_stops_where_the_decision_says) {
  scripted_device dev(std::vector<double>(20, 1.0));
  stopping_criterion stop({0.005, 2, 500, 1e9});
  std::vector<std::pair<bool, bool>> asked;
  take_samples(
      dev, stop, 0, true, [] {}, [] {}, [](size_t, double) {},
      [&](bool must, bool may) {
        asked.emplace_back(must, may);
        return must || (may && stop.samples().size() >= 5);
      });
  BOOST_TEST(stop.samples().size() == 5u);
  BOOST_TEST((asked.front() == std::make_pair(false, false)));
  BOOST_TEST((asked.back() == std::make_pair(false, true)));  // its target met: may, not must

  // The samples taken after its own stop are kept, so every rank has as many.
  BOOST_TEST(stop.noise_target_met());

  scripted_device capped(std::vector<double>{1.0, 3.0, 1.0, 3.0, 1.0, 3.0});
  stopping_criterion at_max({0.005, 2, 3, 1e9});
  bool must_seen = false;
  take_samples(
      capped, at_max, 0, true, [] {}, [] {}, [](size_t, double) {},
      [&](bool must, bool) { return must_seen = must; });
  BOOST_TEST(at_max.samples().size() == 3u);
  BOOST_TEST(must_seen);

  // Past its noise target a rule must stop at its max reps.
  stopping_criterion past({0.005, 2, 4, 1e9});
  BOOST_TEST(!past.add(1.0, 0));
  BOOST_TEST(past.add(1.0, 0));
  BOOST_TEST(!past.add_after_stop(1.0, 0));
  BOOST_TEST(past.add_after_stop(1.0, 0));
  BOOST_TEST(past.samples().size() == 4u);
}

// One process (no launcher): every decision is its own.
BOOST_AUTO_TEST_CASE(one_process_decides_alone) {
  glabench::rank_agreement agree(0);
  BOOST_TEST(!agree.across_processes());
  BOOST_TEST(agree.all(true));
  BOOST_TEST(!agree.all(false));
  BOOST_TEST(agree.stop(false, true));
  BOOST_TEST(agree.stop(true, true));
  BOOST_TEST(!agree.stop(false, false));
}

BOOST_AUTO_TEST_SUITE_END()
