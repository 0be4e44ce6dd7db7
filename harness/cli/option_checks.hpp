// The checks of glabench's numeric options, in one place. Each is a CLI11 validator that
// reads the value strictly — decimal, the whole text, no NaN, no infinity, nothing that
// overflows — and checks its range, so that a bad value exits 2 (kExitBadInput) before
// anything runs, with a message naming the option, the value and the rule:
//   --alpha: 'nan': must be a finite number in (0, 1) (the U test's significance level)
// CLI11 alone reads "nan" and "inf" into a double (and its range checks let NaN through:
// every comparison with it is false), "-1" into an unsigned, and "010" as octal.
// Options that name a choice from a fixed set (--mask) are checked here the same way:
//   --mask: 'diag': must be causal or full, or a comma-separated list of them (…)
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace glabench::cli::option_checks {

// Whether an interval's end belongs to it.
enum class end { open, closed };

inline std::string interval_text(double lo, end lo_end, double hi, end hi_end) {
  if (std::isinf(hi)) return fmt::format("{} {}", lo_end == end::closed ? "≥" : ">", lo);
  return fmt::format("in {}{}, {}{}", lo_end == end::closed ? "[" : "(", lo, hi,
                     hi_end == end::closed ? "]" : ")");
}

// A finite number in the interval from lo to hi (hi = infinity: no upper end). `why`,
// when given, says what the rule protects, after the rule in the message.
inline CLI::Validator real(double lo, end lo_end, double hi, end hi_end, std::string why = "") {
  const std::string rule = "a finite number " + interval_text(lo, lo_end, hi, hi_end);
  auto check = [=](std::string& text) -> std::string {
    double x = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, x);
    const bool read = !text.empty() && ec == std::errc() && ptr == last && std::isfinite(x);
    const bool inside = read && (lo_end == end::closed ? x >= lo : x > lo) &&
                        (hi_end == end::closed ? x <= hi : x < hi);
    if (inside) return {};
    return fmt::format("'{}': must be {}{}", text, rule, why.empty() ? "" : " (" + why + ")");
  };
  return CLI::Validator(check, rule);
}

// A whole number in [lo, hi], written in decimal without leading zeros: CLI11 would read
// "010" as octal (and this validator may be attached by ->check, which cannot rewrite it).
template <typename T>
CLI::Validator whole(T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max(),
                     std::string why = "") {
  static_assert(std::is_integral_v<T>);
  const std::string rule = fmt::format("a whole number in [{}, {}]", lo, hi);
  auto check = [=](std::string& text) -> std::string {
    T x = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, x);
    const size_t digits = text.find_first_not_of('-');
    const bool leading_zero =
        digits != std::string::npos && text.size() > digits + 1 && text[digits] == '0';
    if (leading_zero)
      return fmt::format("'{}': must be {} without leading zeros (CLI11 reads them as octal)", text,
                         rule);
    if (!text.empty() && ec == std::errc() && ptr == last && x >= lo && x <= hi) return {};
    return fmt::format("'{}': must be {}{}", text, rule, why.empty() ? "" : " (" + why + ")");
  };
  return CLI::Validator(check, rule);
}

// A number of bytes ≥ lo: a whole number in decimal without leading zeros, optionally
// followed by a unit, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of
// 1024), in any case; at most 2^64 − 1 bytes in all. It rewrites the text to the number
// of bytes, so it is attached by ->transform. CLI11's AsSizeValue reads "-1" as 2^64 − 1,
// "010" as 8 and "0x10" as 16, and wraps on overflow.
inline CLI::Validator bytes(uint64_t lo = 1) {
  const std::string rule = fmt::format(
      "a whole number of bytes ≥ {} in decimal without leading zeros, optionally with a unit: "
      "kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)",
      lo);
  auto check = [=](std::string& text) -> std::string {
    static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
        {"", 1},
        {"kb", 1'000},
        {"mb", 1'000'000},
        {"gb", 1'000'000'000},
        {"tb", 1'000'000'000'000},
        {"kib", uint64_t{1} << 10},
        {"mib", uint64_t{1} << 20},
        {"gib", uint64_t{1} << 30},
        {"tib", uint64_t{1} << 40},
    };
    const size_t unit_start = std::min(text.find_first_not_of("0123456789"), text.size());
    std::string unit = text.substr(unit_start);
    for (char& c : unit) c = char(std::tolower(static_cast<unsigned char>(c)));
    uint64_t per_unit = 0;
    for (const auto& [name, size] : kUnits)
      if (unit == name) per_unit = size;
    uint64_t count = 0;
    const char* first = text.data();
    const char* last = first + unit_start;
    const auto [ptr, ec] = std::from_chars(first, last, count);
    const bool read = unit_start > 0 && ec == std::errc() && ptr == last && per_unit > 0 &&
                      !(unit_start > 1 && text[0] == '0');
    const uint64_t most = std::numeric_limits<uint64_t>::max();
    if (!read || count > most / per_unit || count * per_unit < lo)
      return fmt::format("'{}': must be {}", text, rule);
    text = std::to_string(count * per_unit);
    return {};
  };
  return CLI::Validator(check, rule);
}

// The items of a comma-separated list (one value of a repeatable list option), empty
// ones included: "a,,b" is {"a", "", "b"}, which words() then refuses.
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// One of `allowed`, or a comma-separated list of them (each item one of them, none
// empty), for a repeatable option that takes either; split_list reads it afterwards.
// `why`, when given, says what the words are, after the rule in the message.
inline CLI::Validator words(std::vector<std::string> allowed, std::string why = "") {
  std::string choices;
  for (size_t i = 0; i < allowed.size(); ++i)
    choices += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
  const std::string rule = choices + ", or a comma-separated list of them";
  auto check = [=](std::string& text) -> std::string {
    for (const std::string& item : split_list(text))
      if (std::find(allowed.begin(), allowed.end(), item) == allowed.end())
        return fmt::format("'{}': must be {}{}", text, rule, why.empty() ? "" : " (" + why + ")");
    return {};
  };
  return CLI::Validator(check, rule);
}

// A repeatable option that takes words or comma-separated lists of them (checked by
// words()): `out` becomes the words given, in order, repeats dropped (unchanged when none
// was given); the word `expand.first`, where given, stands for the list `expand.second`.
inline void set_words(std::vector<std::string>& out, const std::vector<std::string>& given,
                      const std::pair<std::string, std::vector<std::string>>& expand = {}) {
  if (given.empty()) return;
  out.clear();
  for (const auto& list : given)
    for (const auto& word : split_list(list)) {
      const bool expands = !expand.first.empty() && word == expand.first;
      for (const auto& w : expands ? expand.second : std::vector<std::string>{word})
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
}

// The ranges, named once.
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr int kMaxReps = 1'000'000;     // samples of one configuration
inline constexpr double kMaxSeconds = 86'400;  // a day: caps on time per configuration

}  // namespace glabench::cli::option_checks
