// When to stop taking timing samples of one configuration: once the coefficient of
// variation (stddev / mean) of the samples so far is at or under the noise target with
// at least min_reps samples; else at max_reps samples; else once time_cap_s has passed
// with at least 5 samples (the fewest `glabench compare` runs its U test on). The
// noise test needs two samples.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace glabench {

struct stopping_rule {
  double noise_target = 0.005;
  int min_reps = 10;
  int max_reps = 500;
  double time_cap_s = 1.0;
  static constexpr size_t kMinSamplesAtCap = 5;
};

enum class stop_reason { not_yet, noise_target, max_reps, time_cap };
std::string_view stop_reason_name(stop_reason r);

class stopping_criterion {
 public:
  explicit stopping_criterion(const stopping_rule& rule) : rule_(rule) {}

  // Adds one sample, taken `elapsed_s` seconds after sampling began; true once sampling
  // should stop (and every call after that).
  bool add(double sample_ms, double elapsed_s);
  // A sample taken after the rule stopped because another process had not (bench across
  // processes: rank_agreement): recorded, with the cv; true where this rule must stop
  // regardless (max reps, the time cap, or a stop other than the noise target's).
  bool add_after_stop(double sample_ms, double elapsed_s);

  stop_reason reason() const { return reason_; }
  bool noise_target_met() const { return reason_ == stop_reason::noise_target; }
  const std::vector<double>& samples() const { return samples_; }
  double cv() const { return cv_; }  // of the samples so far; 0 before the second

 private:
  stopping_rule rule_;
  std::vector<double> samples_;
  double cv_ = 0;
  stop_reason reason_ = stop_reason::not_yet;
};

}  // namespace glabench
