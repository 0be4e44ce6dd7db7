#include "bench_results.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <functional>

#include "results_row.hpp"

namespace glabench {

std::string_view bench_status_name(bench_status s) {
  switch (s) {
    case bench_status::ok:
      return "ok";
    case bench_status::failed:
      return "failed";
    case bench_status::skipped:
      return "skipped";
    case bench_status::crashed:
      return "crashed";
    case bench_status::timeout:
      return "timeout";
  }
  return "?";
}

bool is_failure(bench_status s) {
  return s == bench_status::failed || s == bench_status::crashed || s == bench_status::timeout;
}

std::string peaks_key(bool cuda) {
  return cuda ? "cuda" : "host";
}

size_t bench_config_hash::operator()(const bench_config& c) const {
  size_t h = 0;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const std::string* s : {&c.backend, &c.op, &c.dtype, &c.mode})
    mix(std::hash<std::string>()(*s));
  for (const int64_t v : {c.B, c.T, c.H, c.K, c.V}) mix(std::hash<int64_t>()(v));
  mix(c.hot);
  mix(std::hash<int32_t>()(c.num_devices));
  mix(c.causal);
  mix(std::hash<std::string>()(c.gates));
  mix(std::hash<std::string>()(c.timing));
  for (const int64_t n : c.seqlens) mix(std::hash<int64_t>()(n));
  return h;
}

config_index::config_index(const std::vector<bench_row>& rows, size_t expected) : rows_(&rows) {
  size_t n = 16;
  while (n < 2 * expected) n *= 2;
  slots_.resize(n);
}

void config_index::clear() {
  std::fill(slots_.begin(), slots_.end(), slot());
  size_ = 0;
}

size_t config_index::probe(const bench_config& c, size_t hash) const {
  const size_t mask = slots_.size() - 1;
  // (the hash's high bits, stirred: bench_config_hash's low bits need not be uniform)
  size_t at = (hash * 0x9e3779b97f4a7c15ULL >> 20) & mask;
  while (slots_[at].index != npos &&
         (slots_[at].hash != hash || !((*rows_)[slots_[at].index].config == c)))
    at = (at + 1) & mask;
  return at;
}

void config_index::grow() {
  std::vector<slot> old(slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const slot& s : old) {
    if (s.index == npos) continue;
    size_t at = (s.hash * 0x9e3779b97f4a7c15ULL >> 20) & mask;
    while (slots_[at].index != npos) at = (at + 1) & mask;
    slots_[at] = s;
  }
}

size_t config_index::insert(size_t i) {
  if (2 * (size_ + 1) > slots_.size()) grow();
  const size_t hash = bench_config_hash()((*rows_)[i].config);
  slot& s = slots_[probe((*rows_)[i].config, hash)];
  const size_t before = s.index;
  if (before == npos) ++size_;
  s = {hash, i};
  return before;
}

size_t config_index::find(const bench_config& c) const {
  return slots_[probe(c, bench_config_hash()(c))].index;
}

std::string bench_config::shape() const {
  std::string s;
  append_shape(s);
  return s;
}

std::string bench_config::label() const {
  std::string s = shape();
  if (op == "softmax_attn" || !causal) (s += ' ') += mask();
  if (num_devices > 1) s += fmt::format(" ×{} GPU", num_devices);
  if (hot) s += " hot";
  if (!gates.empty()) (s += " gates:") += gates;
  if (timing != "eager") (s += ' ') += timing;
  return s;
}

std::string bench_config::name() const {
  std::string s;
  append_name(s);
  return s;
}

namespace {

// "<prefix[0]><B><prefix[1]><T>…<V>": the sizes in decimal, each after its prefix.
void append_sizes(std::string& out, const bench_config& c, const char* const (&prefix)[5]) {
  const int64_t sizes[] = {c.B, c.T, c.H, c.K, c.V};
  for (int i = 0; i < 5; ++i) {
    char digits[24];
    out += prefix[i];
    out.append(digits, std::to_chars(digits, digits + sizeof digits, sizes[i]).ptr);
  }
}

}  // namespace

// Written by hand, not by fmt: compare writes two of these for each of 200,000 rows.
void bench_config::append_shape(std::string& out) const {
  if (seqlens.empty()) return append_sizes(out, *this, {"B", " T", " H", " K", " V"});
  out += fmt::format("B{} T{} N{} H{} K{} V{}", B, T, seqlens.size(), H, K, V);
}

void bench_config::append_name(std::string& out) const {
  for (const std::string* part : {&backend, &op, &dtype, &mode}) out += *part, out += '/';
  append_sizes(out, *this, {"B", "_T", "_H", "_K", "_V"});
  if (num_devices > 1) {
    char digits[12];
    out += "/x";
    out.append(digits, std::to_chars(digits, digits + sizeof digits, num_devices).ptr);
  }
  if (hot) out += "/hot";
  if (!causal) out += "/full";
  if (!gates.empty()) out += "/gates-", out += gates;
  if (timing != "eager") out += '/', out += timing;
  if (!seqlens.empty())
    out += fmt::format("/packed-N{}-L{}", seqlens.size(), fmt::join(seqlens, "-"));
}

// The writer: the rows by their description (results_row.hpp); the readers are
// results_reader.cpp.
nlohmann::json to_json(const bench_results& r) {
  using nlohmann::json;
  json context = r.context;
  context["glabench_results"] = "bench";
  context["schema_version"] = kBenchSchemaVersion;
  json peaks = json::object();
  for (const auto& [where, p] : r.peaks)
    peaks[where] = {{"gemm_tflops", p.gemm_tflops},
                    {"notes", p.notes},
                    {"copy_gbps", p.copy_gbps ? json(*p.copy_gbps) : json(nullptr)}};
  context["peaks"] = peaks;
  json rows = json::array();
  for (const auto& row : r.rows) rows.push_back(row_to_json(row));
  return {{"context", context}, {"benchmarks", rows}};
}

}  // namespace glabench
