// The console of `glabench bench` (README, "Benchmarking"): glabench's own table — the
// results file keeps Google Benchmark's JSON layout, the console does not need its
// columns. A line per configuration as it finishes:
//
//   configuration                                median ms      p20–p80 ms     cv  reps   GB/s  %
//   peak    status naive_recurrent  gla  fp32  fwd  B4 T1024 …     139.8   138.9–141.2  0.61%
//   10  1.172  5.6% copy  ok
//
// the shape followed by softmax_attn's mask ("causal" or "full", --mask), then by "×2 GPU"
// when the backend was given more than one device (--devices); times in milliseconds with
// four significant digits and no SI prefixes; % peak the larger of the copy-bandwidth and
// GEMM fractions of this run's measured peaks; a failed, crashed or timed-out
// configuration gets its status in red and its reason instead. Skipped
// configurations are not listed one by one: finish() prints one line per backend and
// reason (reasons that differ only in their figures count as one), then the totals.
// Colour only where console_style allows it.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench_results.hpp"
#include "console_style.hpp"

namespace glabench {

class bench_printer {
 public:
  // `planned`: every configuration the run will print (bench_runner's planned_configs),
  // for the column widths.
  bench_printer(std::FILE* out, const std::vector<bench_config>& planned, console_style style);

  void row(const bench_row& r);
  // The skips, grouped, and "N timed, N failed, N skipped".
  void finish();

  // Rows printed so far: timed, and failed (failed, crashed or timed out).
  size_t timed() const { return timed_; }
  size_t failed() const { return failed_; }

 private:
  struct skip_group {
    size_t count = 0;
    std::string first_reason;
    bool reasons_differ = false;  // in their figures
  };
  std::string configuration(const bench_config& c) const;

  std::FILE* out_;
  console_style style_;
  size_t w_backend_ = 7, w_op_ = 2, w_shape_ = 5;
  bool header_printed_ = false;
  size_t timed_ = 0, failed_ = 0, skipped_ = 0;
  // (backend, reason with its figures masked) -> the group, in first-seen order.
  std::vector<std::pair<std::pair<std::string, std::string>, skip_group>> skips_;
};

}  // namespace glabench
