#include "bench_printer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "safe_text.hpp"

namespace glabench {
namespace {

constexpr size_t kDtypeWidth = 4, kModeWidth = 6;

// Four significant digits, never an exponent or an SI prefix: 1235, 213.3, 0.01554.
std::string four_digits(double x) {
  if (!(x > 0) || !std::isfinite(x)) return fmt::format("{}", x);
  const int decimals = std::clamp(3 - int(std::floor(std::log10(x))), 0, 9);
  return fmt::format("{:.{}f}", x, decimals);
}

// The larger fraction of the measured peaks, and which: "56% copy", "3.2% gemm".
std::string peak_text(const bench_row& r) {
  const double copy = r.bandwidth_fraction.value_or(-1), gemm = r.flop_fraction.value_or(-1);
  if (copy < 0 && gemm < 0) return "–";
  const double pct = 100 * std::max(copy, gemm);
  return fmt::format("{:.{}f}% {}", pct, pct >= 10 ? 0 : 1, gemm > copy ? "gemm" : "copy");
}

// A skip reason with its figures masked, so that "one call took 1.08 s" and "… 1.02 s"
// group together.
std::string reason_kind(const std::string& reason) {
  std::string kind;
  for (size_t i = 0; i < reason.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(reason[i]));
    if (!digit) {
      kind += reason[i];
    } else if (kind.empty() || kind.back() != '#') {
      kind += '#';
    }
    if (digit)
      while (i + 1 < reason.size() &&
             (std::isdigit(static_cast<unsigned char>(reason[i + 1])) || reason[i + 1] == '.'))
        ++i;
  }
  return kind;
}

// Terminal columns of UTF-8 text: its code points (the table's text has no wide ones).
size_t columns(const std::string& s) {
  return size_t(std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}

}  // namespace

bench_printer::bench_printer(std::FILE* out, const std::vector<bench_config>& planned,
                             console_style style)
    : out_(out), style_(style) {
  for (const bench_config& c : planned) {
    w_backend_ = std::max(w_backend_, console_safe(c.backend).size());
    w_op_ = std::max(w_op_, c.op.size());
    w_shape_ = std::max(w_shape_, columns(c.label()));
  }
}

std::string bench_printer::configuration(const bench_config& c) const {
  return fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}", console_safe(c.backend), w_backend_,
                     c.op, w_op_, c.dtype, kDtypeWidth, c.mode, kModeWidth, c.label(), w_shape_);
}

void bench_printer::row(const bench_row& r) {
  if (r.status == bench_status::skipped) {
    ++skipped_;
    const auto key = std::make_pair(r.config.backend, reason_kind(r.message));
    auto it =
        std::find_if(skips_.begin(), skips_.end(), [&](const auto& g) { return g.first == key; });
    if (it == skips_.end()) it = skips_.insert(skips_.end(), {key, {0, r.message, false}});
    ++it->second.count;
    it->second.reasons_differ = it->second.reasons_differ || r.message != it->second.first_reason;
    return;
  }
  if (!header_printed_) {
    const size_t w_config = w_backend_ + w_op_ + kDtypeWidth + kModeWidth + w_shape_ + 8;
    fmt::print(out_, "{:<{}}  {:>9}  {:>15}  {:>6}  {:>4}  {:>7}  {:>9}  {}\n", "configuration",
               w_config, "median ms", "p20–p80 ms", "cv", "reps", "GB/s", "% peak", "status");
    header_printed_ = true;
  }
  if (r.status == bench_status::ok && r.stats) {
    ++timed_;
    const sample_summary& s = *r.stats;
    fmt::print(out_, "{}  {:>9}  {:>15}  {:>5.2f}%  {:>4}  {:>7}  {:>9}  {}\n",
               configuration(r.config), four_digits(s.median),
               four_digits(s.p20) + "–" + four_digits(s.p80), 100 * s.cv, s.n,
               r.gbps ? four_digits(*r.gbps) : "–", peak_text(r),
               style_.paint(r.noise_target_met ? "ok" : "ok, noise target not met", tone::good));
    return;
  }
  ++failed_;
  std::string status(bench_status_name(r.status));
  std::transform(status.begin(), status.end(), status.begin(), ::toupper);
  fmt::print(out_, "{}  {}: {}\n", configuration(r.config), style_.paint(status, tone::bad),
             console_safe(r.message));
}

void bench_printer::finish() {
  if (header_printed_ && !skips_.empty()) fmt::print(out_, "\n");
  for (const auto& [key, group] : skips_) {
    const std::string text =
        fmt::format("skipped  {}: {} configuration{}: {}{}", console_safe(key.first), group.count,
                    group.count == 1 ? "" : "s", console_safe(group.first_reason),
                    group.reasons_differ ? " (the first; the others alike)" : "");
    fmt::print(out_, "{}\n", style_.paint(text, tone::muted));
  }
  fmt::print(out_, "{} timed, {} failed, {} skipped\n", timed_, failed_, skipped_);
}

}  // namespace glabench
