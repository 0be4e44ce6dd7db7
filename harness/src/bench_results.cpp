#include "bench_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "bench_shapes.hpp"
#include "gate_regime.hpp"
#include "json_reader.hpp"

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
  append_sizes(out, *this, {"B", " T", " H", " K", " V"});
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
}

namespace {

using nlohmann::json;

void put_optional(json& j, const char* key, const std::optional<double>& v) {
  j[key] = v ? json(*v) : json(nullptr);
}

json row_to_json(const bench_row& r) {
  const bench_config& c = r.config;
  const double median = r.stats ? r.stats->median : 0;
  json j = {{"name", c.name()},
            {"run_name", c.name()},
            {"run_type", "iteration"},
            {"repetitions", r.samples_ms.size()},
            {"repetition_index", 0},
            {"threads", 1},
            {"iterations", r.samples_ms.size()},
            {"real_time", median},
            {"cpu_time", median},
            {"time_unit", "ms"},
            {"backend", c.backend},
            {"op", c.op},
            {"dtype", c.dtype},
            {"mode", c.mode},
            {"B", c.B},
            {"T", c.T},
            {"H", c.H},
            {"K", c.K},
            {"V", c.V},
            {"hot", c.hot},
            {"causal", c.causal},
            {"timing", c.timing},
            {"devices", r.devices},
            {"status", bench_status_name(r.status)},
            {"ran_on", r.ran_on},
            {"message", r.message},
            {"samples_ms", r.samples_ms},
            {"bytes", r.bytes},
            {"flops", r.flops},
            {"noise_target_met", r.noise_target_met}};
  if (!c.gates.empty()) j["gates"] = c.gates;
  if (r.timed_outputs_identical) j["timed_outputs_identical"] = *r.timed_outputs_identical;
  if (r.timed_outputs_rel_l2)
    j["timed_outputs_rel_l2"] =
        std::isfinite(*r.timed_outputs_rel_l2) ? json(*r.timed_outputs_rel_l2) : json(nullptr);
  if (r.status != bench_status::ok) {
    j["error_occurred"] = true;  // Google Benchmark's readers skip such entries
    j["error_message"] = r.message;
  }
  json checks = json::array();
  for (const auto& ch : r.checks)
    checks.push_back({{"tensor", ch.tensor},
                      {"rel_l2", std::isfinite(ch.rel_l2) ? json(ch.rel_l2) : json(nullptr)},
                      {"threshold", ch.threshold},
                      {"passed", ch.passed},
                      {"max_abs", std::isfinite(ch.max_abs) ? json(ch.max_abs) : json(nullptr)}});
  j["checks"] = checks;
  if (r.stats) {
    const sample_summary& s = *r.stats;
    j["median_ms"] = s.median;
    j["p20_ms"] = s.p20;
    j["p80_ms"] = s.p80;
    j["min_ms"] = s.min;
    j["max_ms"] = s.max;
    j["mean_ms"] = s.mean;
    j["stddev_ms"] = s.stddev;
    j["cv"] = s.cv;
  }
  put_optional(j, "wall_s", r.wall_s);
  put_optional(j, "gbps", r.gbps);
  put_optional(j, "tflops", r.tflops);
  put_optional(j, "bandwidth_fraction", r.bandwidth_fraction);
  put_optional(j, "flop_fraction", r.flop_fraction);
  if (!r.backend_report.is_null()) j["backend_report"] = r.backend_report;
  return j;
}

// One JSON value as the reader keeps it: a scalar whole, a container by its type only
// (the rows' arrays are kept apart, in raw_row). type discarded: the field is absent.
struct raw_value {
  json::value_t type = json::value_t::discarded;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;

  bool present() const { return type != json::value_t::discarded; }
  bool is_number() const {
    return type == json::value_t::number_integer || type == json::value_t::number_unsigned ||
           type == json::value_t::number_float;
  }
  double number() const {
    return type == json::value_t::number_integer    ? double(i)
           : type == json::value_t::number_unsigned ? double(u)
           : type == json::value_t::number_float    ? d
                                                    : NAN;
  }
};

raw_value typed(json::value_t type) {
  raw_value v;
  v.type = type;
  return v;
}

raw_value raw_of(const json& v) {
  raw_value r;
  r.type = v.type();
  switch (v.type()) {
    case json::value_t::boolean:
      r.b = v.get<bool>();
      break;
    case json::value_t::number_integer:
      r.i = v.get<int64_t>();
      break;
    case json::value_t::number_unsigned:
      r.u = v.get<uint64_t>();
      break;
    case json::value_t::number_float:
      r.d = v.get<double>();
      break;
    case json::value_t::string:
      r.s = v.get<std::string>();
      break;
    default:
      break;
  }
  return r;
}

// Where a row's field is, spelled out only when an error names it ("benchmarks[3]",
// "benchmarks[3].checks[0]"): the checks run for every field of every row.
struct row_path {
  size_t row = 0;
  std::optional<size_t> check;
};
std::string spell(const std::string& where) {
  return where;
}
std::string spell(const row_path& where) {
  std::string s = "benchmarks[" + std::to_string(where.row) + "]";
  if (where.check) s += ".checks[" + std::to_string(*where.check) + "]";
  return s;
}

// Field checks that name the file, the field and the rule when the JSON is wrong. Each
// rule is written once, on a value (raw_value); the json-object forms look the field up.
// `where` is a std::string or a row_path.
class reader {
 public:
  reader(const std::string& source) : source_(source) {}
  [[noreturn]] void fail(const std::string& where, const std::string& rule) const {
    throw results_error(fmt::format("{}: {}: {}", source_, where, rule));
  }

  // On a value: the field `where`.`key` (the message's name for it is built only on
  // failure: these run for every field of every row).
  template <typename Where>
  void present(const raw_value& v, const Where& where, const char* key) const {
    if (!v.present()) fail(spell(where) + "." + key, "is missing");
  }
  template <typename Where>
  std::string str(const raw_value& v, const Where& where, const char* key) const {
    string_present(v, where, key);
    return v.s;
  }
  // The same, moving the string out of `v`.
  template <typename Where>
  std::string str(raw_value&& v, const Where& where, const char* key) const {
    string_present(v, where, key);
    return std::move(v.s);
  }
  template <typename Where>
  double num(const raw_value& v, const Where& where, const char* key) const {
    present(v, where, key);
    if (!v.is_number() || !std::isfinite(v.number()))
      fail(spell(where) + "." + key, "must be a finite number");
    return v.number();
  }
  // Read exactly, never through a double: a JSON integer (4.0, 4.5 and 1e30 are floats
  // to the parser, and so is an integer too large for 64 bits) from 1 to 2^63 − 1.
  template <typename Where>
  int64_t positive_int(const raw_value& v, const Where& where, const char* key) const {
    present(v, where, key);
    if (v.type == json::value_t::number_unsigned && v.u >= 1 &&
        v.u <= uint64_t(std::numeric_limits<int64_t>::max()))
      return int64_t(v.u);
    if (v.type == json::value_t::number_integer && v.i >= 1) return v.i;
    fail(spell(where) + "." + key,
         "must be a positive integer up to 2^63 − 1, written without a fraction or exponent");
  }
  template <typename Where>
  bool boolean(const raw_value& v, const Where& where, const char* key) const {
    present(v, where, key);
    if (v.type != json::value_t::boolean) fail(spell(where) + "." + key, "must be true or false");
    return v.b;
  }
  template <typename Where>
  std::optional<double> optional_num(const raw_value& v, const Where& where,
                                     const char* key) const {
    if (!v.present() || v.type == json::value_t::null) return std::nullopt;
    return num(v, where, key);
  }

  // On a field of a JSON object.
  const json& at(const json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) fail(where, "must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(where + "." + key, "is missing");
    return *it;
  }
  static raw_value field(const json& obj, const char* key) {
    auto it = obj.find(key);  // (none on a non-object)
    return it == obj.end() ? raw_value() : raw_of(*it);
  }
  std::string str(const json& obj, const std::string& where, const char* key) const {
    at(obj, where, key);
    return str(field(obj, key), where, key);
  }
  double num(const json& obj, const std::string& where, const char* key) const {
    at(obj, where, key);
    return num(field(obj, key), where, key);
  }
  // A string, when present.
  void optional_str(const json& obj, const std::string& where, const char* key) const {
    if (const raw_value v = field(obj, key); v.present()) str(v, where, key);
  }
  std::optional<double> optional_num(const json& obj, const std::string& where,
                                     const char* key) const {
    return optional_num(field(obj, key), where, key);
  }

 private:
  template <typename Where>
  void string_present(const raw_value& v, const Where& where, const char* key) const {
    present(v, where, key);
    if (v.type != json::value_t::string) fail(spell(where) + "." + key, "must be a string");
  }

  std::string source_;
};

// One entry of a row's "checks", as read.
struct raw_check {
  bool object = true;
  raw_value tensor, rel_l2, threshold, passed, max_abs;
};

// One row of "benchmarks", as read: the fields glabench reads (others are ignored),
// samples_ms as numbers (NaN for an element that is not one), the checks, the devices
// (each as read: a container only by its type) and the backend's report, whole.
struct raw_row {
  bool object = true;
  raw_value backend, op, dtype, mode, B, T, H, K, V, hot, causal, gates, timing, status, message,
      ran_on, bytes, flops, noise_target_met, wall_s, gbps, tflops, bandwidth_fraction,
      flop_fraction, timed_outputs_identical, timed_outputs_rel_l2;
  json::value_t samples_type = json::value_t::discarded, checks_type = json::value_t::discarded,
                devices_type = json::value_t::discarded, report_type = json::value_t::discarded;
  std::vector<double> samples_ms;
  std::vector<raw_check> checks;
  std::vector<raw_value> devices;
  json backend_report;  // when report_type is object
};

// The scalar fields of a row and of a check, by name. A key is looked up for every
// field of every row: by its length first, which costs less than hashing it.
template <typename Raw>
struct field_entry {
  std::string_view name;
  raw_value Raw::*member;
};
constexpr field_entry<raw_row> kRowFields[] = {
    {"backend", &raw_row::backend},
    {"op", &raw_row::op},
    {"dtype", &raw_row::dtype},
    {"mode", &raw_row::mode},
    {"B", &raw_row::B},
    {"T", &raw_row::T},
    {"H", &raw_row::H},
    {"K", &raw_row::K},
    {"V", &raw_row::V},
    {"hot", &raw_row::hot},
    {"causal", &raw_row::causal},
    {"gates", &raw_row::gates},
    {"timing", &raw_row::timing},
    {"status", &raw_row::status},
    {"message", &raw_row::message},
    {"ran_on", &raw_row::ran_on},
    {"bytes", &raw_row::bytes},
    {"flops", &raw_row::flops},
    {"noise_target_met", &raw_row::noise_target_met},
    {"wall_s", &raw_row::wall_s},
    {"gbps", &raw_row::gbps},
    {"tflops", &raw_row::tflops},
    {"bandwidth_fraction", &raw_row::bandwidth_fraction},
    {"flop_fraction", &raw_row::flop_fraction},
    {"timed_outputs_identical", &raw_row::timed_outputs_identical},
    {"timed_outputs_rel_l2", &raw_row::timed_outputs_rel_l2}};
constexpr field_entry<raw_check> kCheckFields[] = {{"tensor", &raw_check::tensor},
                                                   {"rel_l2", &raw_check::rel_l2},
                                                   {"threshold", &raw_check::threshold},
                                                   {"passed", &raw_check::passed},
                                                   {"max_abs", &raw_check::max_abs}};

template <typename Raw, size_t N>
raw_value Raw::*find_field(const field_entry<Raw> (&fields)[N], std::string_view key) {
  for (const auto& f : fields)
    if (f.name.size() == key.size() && f.name[0] == key[0] && f.name == key) return f.member;
  return nullptr;
}

double sample_of(const json& s) {
  return s.is_number() ? s.get<double>() : NAN;
}

// A row of a parsed JSON document, as read.
raw_row raw_row_of(const json& j) {
  raw_row r;
  r.object = j.is_object();
  if (!r.object) return r;
  for (const auto& [name, member] : kRowFields)
    if (auto it = j.find(name); it != j.end()) r.*member = raw_of(*it);
  if (auto it = j.find("samples_ms"); it != j.end()) {
    r.samples_type = it->type();
    if (it->is_array())
      for (const auto& s : *it) r.samples_ms.push_back(sample_of(s));
  }
  if (auto it = j.find("devices"); it != j.end()) {
    r.devices_type = it->type();
    if (it->is_array())
      for (const auto& d : *it) r.devices.push_back(raw_of(d));
  }
  if (auto it = j.find("backend_report"); it != j.end()) {
    r.report_type = it->type();
    if (it->is_object()) r.backend_report = *it;
  }
  if (auto it = j.find("checks"); it != j.end()) {
    r.checks_type = it->type();
    if (it->is_array())
      for (const auto& c : *it) {
        raw_check rc;
        rc.object = c.is_object();
        if (rc.object)
          for (const auto& [name, member] : kCheckFields)
            if (auto f = c.find(name); f != c.end()) rc.*member = raw_of(*f);
        r.checks.push_back(std::move(rc));
      }
  }
  return r;
}

// The row's devices: absent in files from before they were recorded (then [0]); else a
// non-empty array of device numbers, each a JSON integer from 0 to 2^31 − 1, none twice.
std::vector<int32_t> devices_of(const raw_row& j, const row_path& where, const reader& rd) {
  if (j.devices_type == json::value_t::discarded) return {0};
  if (j.devices_type != json::value_t::array)
    rd.fail(spell(where) + ".devices", "must be an array");
  if (j.devices.empty()) rd.fail(spell(where) + ".devices", "must not be empty");
  std::vector<int32_t> out;
  out.reserve(j.devices.size());
  for (const raw_value& d : j.devices) {
    const bool whole = (d.type == json::value_t::number_unsigned && d.u <= INT32_MAX) ||
                       (d.type == json::value_t::number_integer && d.i >= 0 && d.i <= INT32_MAX);
    if (!whole)
      rd.fail(spell(where) + ".devices",
              "must hold device numbers: integers from 0 to 2^31 − 1, written without a fraction "
              "or exponent");
    out.push_back(int32_t(d.type == json::value_t::number_unsigned ? int64_t(d.u) : d.i));
  }
  std::vector<int32_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    rd.fail(spell(where) + ".devices", "must not name a device twice");
  return out;
}

// The row read from `j`, whose strings and samples are moved out.
bench_row row_from_raw(raw_row& j, const row_path& where, const reader& rd) {
  if (!j.object) rd.fail(spell(where), "must be an object");
  bench_row r;
  bench_config& c = r.config;
  c.backend = rd.str(std::move(j.backend), where, "backend");
  c.op = rd.str(std::move(j.op), where, "op");
  c.dtype = rd.str(std::move(j.dtype), where, "dtype");
  c.mode = rd.str(std::move(j.mode), where, "mode");
  if (std::string_view(c.mode) != "fwd" && std::string_view(c.mode) != "fwdbwd")
    rd.fail(spell(where) + ".mode", "must be fwd or fwdbwd");
  c.B = rd.positive_int(j.B, where, "B");
  c.T = rd.positive_int(j.T, where, "T");
  c.H = rd.positive_int(j.H, where, "H");
  c.K = rd.positive_int(j.K, where, "K");
  c.V = rd.positive_int(j.V, where, "V");
  if (!shape_in_range({c.B, c.T, c.H, c.K, c.V}))
    rd.fail(spell(where), "B·T·H·K·V must be at most 2^62 (sizes would overflow)");
  c.hot = rd.boolean(j.hot, where, "hot");
  // Absent in files from before the mask was recorded: bench then ran causal only.
  c.causal = !j.causal.present() || rd.boolean(j.causal, where, "causal");
  // Absent in files from before regimes: bench then drew every gate as "mild" does.
  const bool gated = std::string_view(c.op) == "gla" || std::string_view(c.op) == "rwkv6";
  if (j.gates.present()) {
    c.gates = rd.str(std::move(j.gates), where, "gates");
    if (!gated && !c.gates.empty())
      rd.fail(spell(where) + ".gates", "must be absent or empty for an op without gates");
    if (gated && !find_gate_regime(c.gates)) {
      std::string names;
      for (const gate_regime& r : gate_regimes()) (names += names.empty() ? "" : ", ") += r.name;
      rd.fail(spell(where) + ".gates", "must be one of " + names);
    }
  } else if (gated) {
    c.gates = kDefaultGateRegime;
  }
  if (j.timing.present()) {
    c.timing = rd.str(std::move(j.timing), where, "timing");
    if (std::string_view(c.timing) != "eager" && std::string_view(c.timing) != "graph")
      rd.fail(spell(where) + ".timing", "must be eager or graph");
  }
  r.devices = devices_of(j, where, rd);
  c.num_devices = int32_t(r.devices.size());
  if (j.report_type != json::value_t::discarded && j.report_type != json::value_t::null) {
    if (j.report_type != json::value_t::object)
      rd.fail(spell(where) + ".backend_report", "must be an object or null");
    r.backend_report = std::move(j.backend_report);
  }
  const std::string status_text = rd.str(std::move(j.status), where, "status");
  const std::string_view status = status_text;
  if (status == "ok")
    r.status = bench_status::ok;
  else if (status == "failed")
    r.status = bench_status::failed;
  else if (status == "skipped")
    r.status = bench_status::skipped;
  else if (status == "crashed")
    r.status = bench_status::crashed;
  else if (status == "timeout")
    r.status = bench_status::timeout;
  else
    rd.fail(spell(where) + ".status", "must be ok, failed, skipped, crashed or timeout");
  r.message = rd.str(std::move(j.message), where, "message");
  r.ran_on = rd.str(std::move(j.ran_on), where, "ran_on");
  if (std::string_view(r.ran_on) != "cuda" && std::string_view(r.ran_on) != "host")
    rd.fail(spell(where) + ".ran_on", "must be cuda or host");
  if (j.samples_type == json::value_t::discarded)
    rd.fail(spell(where) + ".samples_ms", "is missing");
  if (j.samples_type != json::value_t::array)
    rd.fail(spell(where) + ".samples_ms", "must be an array");
  for (const double s : j.samples_ms)
    if (!(s > 0) || !std::isfinite(s))
      rd.fail(spell(where) + ".samples_ms", "must hold positive finite numbers");
  r.samples_ms = std::move(j.samples_ms);
  if (r.status == bench_status::ok && r.samples_ms.empty())
    rd.fail(spell(where) + ".samples_ms", "must not be empty when status is ok");
  if (r.status != bench_status::ok && !r.samples_ms.empty())
    rd.fail(spell(where) + ".samples_ms", "must be empty unless status is ok");
  if (!r.samples_ms.empty()) r.stats = summarize(r.samples_ms);
  if (j.checks_type == json::value_t::discarded) rd.fail(spell(where) + ".checks", "is missing");
  if (j.checks_type != json::value_t::array) rd.fail(spell(where) + ".checks", "must be an array");
  r.checks.reserve(j.checks.size());
  for (size_t i = 0; i < j.checks.size(); ++i) {
    raw_check& ch = j.checks[i];
    const row_path cw{where.row, i};
    if (!ch.object) rd.fail(spell(cw), "must be an object");
    // A non-finite rel_l2 (a NaN output) is written as null.
    // max_abs is absent from files written before it was recorded.
    tensor_check c{rd.str(std::move(ch.tensor), cw, "tensor"),
                   rd.optional_num(ch.rel_l2, cw, "rel_l2").value_or(NAN),
                   rd.num(ch.threshold, cw, "threshold"), rd.boolean(ch.passed, cw, "passed")};
    c.max_abs = rd.optional_num(ch.max_abs, cw, "max_abs").value_or(NAN);
    c.finite = std::isfinite(c.rel_l2);
    r.checks.push_back(std::move(c));
  }
  r.bytes = rd.num(j.bytes, where, "bytes");
  r.flops = rd.num(j.flops, where, "flops");
  r.noise_target_met = rd.boolean(j.noise_target_met, where, "noise_target_met");
  r.wall_s = rd.optional_num(j.wall_s, where, "wall_s");
  r.gbps = rd.optional_num(j.gbps, where, "gbps");
  r.tflops = rd.optional_num(j.tflops, where, "tflops");
  r.bandwidth_fraction = rd.optional_num(j.bandwidth_fraction, where, "bandwidth_fraction");
  r.flop_fraction = rd.optional_num(j.flop_fraction, where, "flop_fraction");
  if (j.timed_outputs_identical.present())
    r.timed_outputs_identical =
        rd.boolean(j.timed_outputs_identical, where, "timed_outputs_identical");
  // null: a NaN or Inf (the row then failed)
  if (j.timed_outputs_rel_l2.present())
    r.timed_outputs_rel_l2 =
        rd.optional_num(j.timed_outputs_rel_l2, where, "timed_outputs_rel_l2").value_or(NAN);
  return r;
}

}  // namespace

json to_json(const bench_results& r) {
  json context = r.context;
  context["glabench_results"] = "bench";
  context["schema_version"] = kBenchSchemaVersion;
  json peaks = json::object();
  for (const auto& [where, p] : r.peaks) {
    json entry = {{"gemm_tflops", p.gemm_tflops}, {"notes", p.notes}};
    put_optional(entry, "copy_gbps", p.copy_gbps);
    peaks[where] = entry;
  }
  context["peaks"] = peaks;
  json rows = json::array();
  for (const auto& row : r.rows) rows.push_back(row_to_json(row));
  return {{"context", context}, {"benchmarks", rows}};
}

namespace {

// The rows, each checked as it comes and against those before it (the configuration is
// the key compare matches by: no repeats), in O(n) on average.
class row_collector {
 public:
  explicit row_collector(const reader& rd) : rd_(&rd), seen_(rows) {}
  row_collector(const row_collector&) = delete;
  row_collector& operator=(const row_collector&) = delete;
  void reset() {
    rows.clear();
    seen_.clear();
  }
  // Moves the row's strings and samples out of `raw`.
  void add(raw_row& raw) {
    const row_path where{rows.size(), std::nullopt};
    rows.push_back(row_from_raw(raw, where, *rd_));
    if (const size_t earlier = seen_.insert(rows.size() - 1); earlier != config_index::npos)
      rd_->fail(spell(where), fmt::format("repeats the configuration {} of benchmarks[{}]",
                                          rows.back().config.name(), earlier));
  }
  std::vector<bench_row> rows;

 private:
  const reader* rd_;
  config_index seen_;  // the rows so far, by configuration
};

// Everything but the rows: that the file is ours, its schema version, the context fields
// read back as typed values, the peaks.
bench_results results_context_from_json(const json& j, const reader& rd) {
  const json& context = rd.at(j, "(top level)", "context");
  if (!context.is_object()) rd.fail("context", "must be an object");
  const auto kind = context.find("glabench_results");
  if (kind == context.end() || !kind->is_string() || kind->get<std::string>() != "bench")
    rd.fail("context.glabench_results",
            "must be \"bench\" (this is not a glabench bench results file)");
  const json& version = rd.at(context, "context", "schema_version");
  // (An unsigned beyond 2^63 reads as negative here: never the version.)
  if (!version.is_number_integer() || version.get<int64_t>() != kBenchSchemaVersion)
    rd.fail("context.schema_version", fmt::format("must be {}", kBenchSchemaVersion));
  // The context fields that compare and report read back as typed values.
  for (const char* key : {"device", "git_commit", "date"}) rd.optional_str(context, "context", key);
  for (const char* when : {"gpu_state_start", "gpu_state_end"}) {
    const auto state = context.find(when);
    if (state == context.end() || !state->is_object()) continue;
    const std::string w = std::string("context.") + when;
    rd.optional_num(*state, w, "temperature_c");
    rd.optional_num(*state, w, "power_w");
    rd.optional_str(*state, w, "clock_event_reasons");
  }

  bench_results r;
  r.context = context;
  const json& peaks = rd.at(context, "context", "peaks");
  if (!peaks.is_object()) rd.fail("context.peaks", "must be an object");
  for (const auto& [where, entry] : peaks.items()) {
    const std::string w = "context.peaks." + where;
    measured_peaks p;
    p.copy_gbps = rd.optional_num(entry, w, "copy_gbps");
    p.gemm_tflops = rd.at(entry, w, "gemm_tflops");
    if (!p.gemm_tflops.is_object()) rd.fail(w + ".gemm_tflops", "must be an object");
    for (const auto& [dtype, rate] : p.gemm_tflops.items())
      rd.num(p.gemm_tflops, w + ".gemm_tflops", dtype.c_str());
    p.notes = rd.str(entry, w, "notes");
    r.peaks[where] = p;
  }
  r.context.erase("peaks");

  return r;
}

json json_of(raw_value&& v) {
  switch (v.type) {
    case json::value_t::boolean:
      return v.b;
    case json::value_t::number_integer:
      return v.i;
    case json::value_t::number_unsigned:
      return v.u;
    case json::value_t::number_float:
      return v.d;
    case json::value_t::string:
      return std::move(v.s);
    default:
      return nullptr;
  }
}

// Reads a results file's JSON in one pass through nlohmann's SAX interface (driven by
// json_reader.hpp's reader, which feeds it the events nlohmann's parser would): each row of
// the top-level "benchmarks" array goes straight into a raw_row and to `on_row` — never
// into a JSON object, whose building and freeing cost several times the parse itself on
// a file of many rows — and everything else into `document`, where "benchmarks" is left
// an empty array. Unknown fields of a row are skipped.
class results_sax {
 public:
  results_sax(std::function<void()> on_rows, std::function<void(raw_row&)> on_row)
      : on_rows_(std::move(on_rows)), on_row_(std::move(on_row)) {}
  json document;

  bool null() { return scalar(typed(json::value_t::null)); }
  bool boolean(bool b) {
    raw_value v = typed(json::value_t::boolean);
    v.b = b;
    return scalar(std::move(v));
  }
  bool number_integer(json::number_integer_t i) {
    raw_value v = typed(json::value_t::number_integer);
    v.i = i;
    return scalar(std::move(v));
  }
  bool number_unsigned(json::number_unsigned_t u) {
    raw_value v = typed(json::value_t::number_unsigned);
    v.u = u;
    return scalar(std::move(v));
  }
  bool number_float(json::number_float_t d, const std::string&) {
    raw_value v = typed(json::value_t::number_float);
    v.d = d;
    return scalar(std::move(v));
  }
  bool string(std::string& s) {
    raw_value v = typed(json::value_t::string);
    v.s = std::move(s);
    return scalar(std::move(v));
  }
  bool binary(json::binary_t&) { return scalar(typed(json::value_t::binary)); }  // not in JSON text
  bool key(std::string& k) {
    key_.swap(k);
    return true;
  }
  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  // Thrown as the parser made it (parse_error, or out_of_range for a number too large).
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

 private:
  // The keys looked for in every row (as string_views: compared by length first).
  static constexpr std::string_view kBenchmarks = "benchmarks", kSamples = "samples_ms",
                                    kChecks = "checks", kDevices = "devices",
                                    kReport = "backend_report";

  // What the innermost open container is.
  enum class kind { top, build, skip, rows, row, samples, checks, check, devices };
  struct frame {
    kind what;
    json* target = nullptr;  // build: the container being built
    int depth = 0;           // skip: containers open inside the skipped one
  };

  bool open(json::value_t type) {
    const json container = type == json::value_t::object ? json::object() : json::array();
    if (frames_.empty()) {
      document = container;
      frames_.push_back({type == json::value_t::object ? kind::top : kind::build, &document});
      return true;
    }
    frame& f = frames_.back();
    switch (f.what) {
      case kind::top:
        if (key_ == kBenchmarks && type == json::value_t::array) {
          document[key_] = json::array();
          on_rows_();  // (a repeated key: the last one counts, as in a parsed JSON object)
          frames_.push_back({kind::rows});
        } else {
          frames_.push_back({kind::build, &(document[key_] = container)});
        }
        break;
      case kind::build:
        frames_.push_back({kind::build, f.target->is_array() ? &f.target->emplace_back(container)
                                                             : &((*f.target)[key_] = container)});
        break;
      case kind::skip:
        ++f.depth;
        break;
      case kind::rows:
        row_ = raw_row();
        row_.object = type == json::value_t::object;
        if (row_.object) {
          frames_.push_back({kind::row});
        } else {
          on_row_(row_);
          frames_.push_back({kind::skip});
        }
        break;
      case kind::row:
        if (key_ == kSamples && type == json::value_t::array) {
          row_.samples_type = type;
          row_.samples_ms.clear();
          frames_.push_back({kind::samples});
        } else if (key_ == kChecks && type == json::value_t::array) {
          row_.checks_type = type;
          row_.checks.clear();
          frames_.push_back({kind::checks});
        } else if (key_ == kDevices && type == json::value_t::array) {
          row_.devices_type = type;
          row_.devices.clear();
          frames_.push_back({kind::devices});
        } else if (key_ == kReport && type == json::value_t::object) {
          // The backend's report is kept whole: built as the document is.
          row_.report_type = type;
          row_.backend_report = json::object();
          frames_.push_back({kind::build, &row_.backend_report});
        } else {
          row_field(typed(type));
          frames_.push_back({kind::skip});
        }
        break;
      case kind::samples:
        row_.samples_ms.push_back(NAN);
        frames_.push_back({kind::skip});
        break;
      case kind::devices:
        row_.devices.push_back(typed(type));  // not a device number
        frames_.push_back({kind::skip});
        break;
      case kind::checks:
        check_ = raw_check();
        check_.object = type == json::value_t::object;
        if (check_.object) {
          frames_.push_back({kind::check});
        } else {
          row_.checks.push_back(check_);
          frames_.push_back({kind::skip});
        }
        break;
      case kind::check:
        check_field(typed(type));
        frames_.push_back({kind::skip});
        break;
    }
    return true;
  }

  bool close() {
    frame& f = frames_.back();
    if (f.what == kind::skip && f.depth > 0) {
      --f.depth;
      return true;
    }
    const kind what = f.what;
    frames_.pop_back();
    if (what == kind::row) on_row_(row_);
    if (what == kind::check) row_.checks.push_back(std::move(check_));
    return true;
  }

  bool scalar(raw_value&& v) {
    if (frames_.empty()) {
      document = json_of(std::move(v));
      return true;
    }
    frame& f = frames_.back();
    switch (f.what) {
      case kind::top:
        document[key_] = json_of(std::move(v));
        break;
      case kind::build:
        if (f.target->is_array())
          f.target->push_back(json_of(std::move(v)));
        else
          (*f.target)[key_] = json_of(std::move(v));
        break;
      case kind::skip:
        break;
      case kind::rows:
        row_ = raw_row();
        row_.object = false;
        on_row_(row_);
        break;
      case kind::row:
        row_field(std::move(v));
        break;
      case kind::samples:
        row_.samples_ms.push_back(v.number());  // NaN for a non-number: not a sample
        break;
      case kind::devices:
        row_.devices.push_back(std::move(v));
        break;
      case kind::checks:
        row_.checks.emplace_back();
        row_.checks.back().object = false;
        break;
      case kind::check:
        check_field(std::move(v));
        break;
    }
    return true;
  }

  // The value of the row's field named key_ (the last of repeated keys counts, as in a
  // parsed JSON object).
  void row_field(raw_value&& v) {
    if (key_ == kSamples) {
      row_.samples_type = v.type;
      row_.samples_ms.clear();
    } else if (key_ == kChecks) {
      row_.checks_type = v.type;
      row_.checks.clear();
    } else if (key_ == kDevices) {
      row_.devices_type = v.type;
      row_.devices.clear();
    } else if (key_ == kReport) {
      row_.report_type = v.type;
      row_.backend_report = nullptr;
    } else if (const auto member = find_field(kRowFields, key_)) {
      row_.*member = std::move(v);
    }
  }
  void check_field(raw_value&& v) {
    if (const auto member = find_field(kCheckFields, key_)) check_.*member = std::move(v);
  }

  std::function<void()> on_rows_;
  std::function<void(raw_row&)> on_row_;  // may move from the row
  std::vector<frame> frames_;
  std::string key_;  // the key of the value being read
  raw_row row_;      // the row being read
  raw_check check_;  // the check being read
};

}  // namespace

bench_results bench_results_from_json(const json& j, const std::string& source) {
  const reader rd(source);
  try {
    bench_results r = results_context_from_json(j, rd);
    const json& rows = rd.at(j, "(top level)", "benchmarks");
    if (!rows.is_array()) rd.fail("benchmarks", "must be an array");
    row_collector collect(rd);
    collect.rows.reserve(rows.size());
    for (const auto& row : rows) {
      raw_row raw = raw_row_of(row);
      collect.add(raw);
    }
    r.rows = std::move(collect.rows);
    return r;
  } catch (const json::exception& e) {
    // The checks name the field of every type error; this is the net under them.
    throw results_error(fmt::format("{}: a field has the wrong JSON type ({})", source, e.what()));
  }
}

bench_results read_bench_results(const std::string& path) {
  return bench_results_from_text(read_results_text(path), path);
}

std::string read_results_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw results_error(path + ": cannot be opened");
  // Read whole, then parsed from memory: several times faster than from the stream. A
  // regular file is read into a string of its size (no growing and copying).
  std::string text;
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > 0) {
    text.resize(size);
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
    if (in.bad()) throw results_error(path + ": cannot be read");
    in.clear();
  }
  // The rest, if any (a file that grew, or one whose size is unknown, such as a pipe).
  std::ostringstream rest;
  rest << in.rdbuf();
  if (in.bad()) throw results_error(path + ": cannot be read");
  text += std::move(rest).str();
  return text;
}

bench_results bench_results_from_text(const std::string& text, const std::string& source) {
  // The rows are checked as the parser completes each; the first bad row's error is
  // kept, and raised after the context's checks, so that a file that is not ours is
  // reported as that.
  const reader rd(source);
  row_collector collect(rd);
  std::exception_ptr row_error;
  results_sax sax(
      [&] {
        collect.reset();
        row_error = nullptr;
      },
      [&](raw_row& row) {
        if (!row_error) try {
            collect.add(row);
          } catch (...) {
            row_error = std::current_exception();
          }
      });
  try {
    json_sax_read(text, sax);             // nlohmann's grammar and values, several times faster
  } catch (const json_syntax_error& e) {  // malformed, or a number that overflows
    throw results_error(source + ": not valid JSON (" + e.what() + ")");
  }
  try {
    bench_results r = results_context_from_json(sax.document, rd);
    const json& rows = rd.at(sax.document, "(top level)", "benchmarks");
    if (!rows.is_array()) rd.fail("benchmarks", "must be an array");
    if (row_error) std::rethrow_exception(row_error);
    r.rows = std::move(collect.rows);
    return r;
  } catch (const json::exception& e) {
    throw results_error(fmt::format("{}: a field has the wrong JSON type ({})", source, e.what()));
  }
}

}  // namespace glabench
