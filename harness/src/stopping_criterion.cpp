#include "stopping_criterion.hpp"

#include "statistics.hpp"

namespace glabench {

std::string_view stop_reason_name(stop_reason r) {
  switch (r) {
    case stop_reason::not_yet:
      return "not yet";
    case stop_reason::noise_target:
      return "noise target";
    case stop_reason::max_reps:
      return "max reps";
    case stop_reason::time_cap:
      return "time cap";
  }
  return "?";
}

bool stopping_criterion::add(double sample_ms, double elapsed_s) {
  if (reason_ != stop_reason::not_yet) return true;
  samples_.push_back(sample_ms);
  const size_t n = samples_.size();
  if (n >= 2) {
    cv_ = summarize(samples_).cv;
    if (n >= size_t(rule_.min_reps) && cv_ <= rule_.noise_target) {
      reason_ = stop_reason::noise_target;
      return true;
    }
  }
  if (n >= size_t(rule_.max_reps))
    reason_ = stop_reason::max_reps;
  else if (elapsed_s >= rule_.time_cap_s && n >= stopping_rule::kMinSamplesAtCap)
    reason_ = stop_reason::time_cap;
  return reason_ != stop_reason::not_yet;
}

bool stopping_criterion::add_after_stop(double sample_ms, double elapsed_s) {
  samples_.push_back(sample_ms);
  const size_t n = samples_.size();
  cv_ = summarize(samples_).cv;
  return reason_ != stop_reason::noise_target || n >= size_t(rule_.max_reps) ||
         (elapsed_s >= rule_.time_cap_s && n >= stopping_rule::kMinSamplesAtCap);
}

}  // namespace glabench
