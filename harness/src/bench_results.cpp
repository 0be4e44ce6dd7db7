#include "bench_results.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "bench_shapes.hpp"

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
  return h;
}

std::string bench_config::shape() const {
  return fmt::format("B{} T{} H{} K{} V{}", B, T, H, K, V);
}

std::string bench_config::name() const {
  return fmt::format("{}/{}/{}/{}/B{}_T{}_H{}_K{}_V{}{}", backend, op, dtype, mode, B, T, H, K, V,
                     hot ? "/hot" : "");
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
            {"status", bench_status_name(r.status)},
            {"ran_on", r.ran_on},
            {"message", r.message},
            {"samples_ms", r.samples_ms},
            {"bytes", r.bytes},
            {"flops", r.flops},
            {"noise_target_met", r.noise_target_met}};
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

// Field checks that name the file, the field and the rule when the JSON is wrong. Each
// rule is written once, on a value (raw_value); the json-object forms look the field up.
class reader {
 public:
  reader(const std::string& source) : source_(source) {}
  [[noreturn]] void fail(const std::string& where, const std::string& rule) const {
    throw results_error(fmt::format("{}: {}: {}", source_, where, rule));
  }

  // On a value: the field `where`.`key` (the message's name for it is built only on
  // failure: these run for every field of every row).
  void present(const raw_value& v, const std::string& where, const char* key) const {
    if (!v.present()) fail(where + "." + key, "is missing");
  }
  std::string str(const raw_value& v, const std::string& where, const char* key) const {
    present(v, where, key);
    if (v.type != json::value_t::string) fail(where + "." + key, "must be a string");
    return v.s;
  }
  double num(const raw_value& v, const std::string& where, const char* key) const {
    present(v, where, key);
    if (!v.is_number() || !std::isfinite(v.number()))
      fail(where + "." + key, "must be a finite number");
    return v.number();
  }
  // Read exactly, never through a double: a JSON integer (4.0, 4.5 and 1e30 are floats
  // to the parser, and so is an integer too large for 64 bits) from 1 to 2^63 − 1.
  int64_t positive_int(const raw_value& v, const std::string& where, const char* key) const {
    present(v, where, key);
    if (v.type == json::value_t::number_unsigned && v.u >= 1 &&
        v.u <= uint64_t(std::numeric_limits<int64_t>::max()))
      return int64_t(v.u);
    if (v.type == json::value_t::number_integer && v.i >= 1) return v.i;
    fail(where + "." + key,
         "must be a positive integer up to 2^63 − 1, written without a fraction or exponent");
  }
  bool boolean(const raw_value& v, const std::string& where, const char* key) const {
    present(v, where, key);
    if (v.type != json::value_t::boolean) fail(where + "." + key, "must be true or false");
    return v.b;
  }
  std::optional<double> optional_num(const raw_value& v, const std::string& where,
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
  std::string source_;
};

// One entry of a row's "checks", as read.
struct raw_check {
  bool object = true;
  raw_value tensor, rel_l2, threshold, passed, max_abs;
};

// One row of "benchmarks", as read: the fields glabench reads (others are ignored),
// samples_ms as numbers (NaN for an element that is not one) and the checks.
struct raw_row {
  bool object = true;
  raw_value backend, op, dtype, mode, B, T, H, K, V, hot, status, message, ran_on, bytes, flops,
      noise_target_met, wall_s, gbps, tflops, bandwidth_fraction, flop_fraction;
  json::value_t samples_type = json::value_t::discarded, checks_type = json::value_t::discarded;
  std::vector<double> samples_ms;
  std::vector<raw_check> checks;
};

// The scalar fields of a row and of a check, by name.
const std::unordered_map<std::string_view, raw_value raw_row::*>& row_fields() {
  static const std::unordered_map<std::string_view, raw_value raw_row::*> fields = {
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
      {"flop_fraction", &raw_row::flop_fraction}};
  return fields;
}
const std::unordered_map<std::string_view, raw_value raw_check::*>& check_fields() {
  static const std::unordered_map<std::string_view, raw_value raw_check::*> fields = {
      {"tensor", &raw_check::tensor},
      {"rel_l2", &raw_check::rel_l2},
      {"threshold", &raw_check::threshold},
      {"passed", &raw_check::passed},
      {"max_abs", &raw_check::max_abs}};
  return fields;
}

double sample_of(const json& s) {
  return s.is_number() ? s.get<double>() : NAN;
}

// A row of a parsed JSON document, as read.
raw_row raw_row_of(const json& j) {
  raw_row r;
  r.object = j.is_object();
  if (!r.object) return r;
  for (const auto& [name, member] : row_fields())
    if (auto it = j.find(name); it != j.end()) r.*member = raw_of(*it);
  if (auto it = j.find("samples_ms"); it != j.end()) {
    r.samples_type = it->type();
    if (it->is_array())
      for (const auto& s : *it) r.samples_ms.push_back(sample_of(s));
  }
  if (auto it = j.find("checks"); it != j.end()) {
    r.checks_type = it->type();
    if (it->is_array())
      for (const auto& c : *it) {
        raw_check rc;
        rc.object = c.is_object();
        if (rc.object)
          for (const auto& [name, member] : check_fields())
            if (auto f = c.find(name); f != c.end()) rc.*member = raw_of(*f);
        r.checks.push_back(std::move(rc));
      }
  }
  return r;
}

bench_row row_from_raw(const raw_row& j, const std::string& where, const reader& rd) {
  if (!j.object) rd.fail(where, "must be an object");
  bench_row r;
  bench_config& c = r.config;
  c.backend = rd.str(j.backend, where, "backend");
  c.op = rd.str(j.op, where, "op");
  c.dtype = rd.str(j.dtype, where, "dtype");
  c.mode = rd.str(j.mode, where, "mode");
  if (c.mode != "fwd" && c.mode != "fwdbwd") rd.fail(where + ".mode", "must be fwd or fwdbwd");
  c.B = rd.positive_int(j.B, where, "B");
  c.T = rd.positive_int(j.T, where, "T");
  c.H = rd.positive_int(j.H, where, "H");
  c.K = rd.positive_int(j.K, where, "K");
  c.V = rd.positive_int(j.V, where, "V");
  if (!shape_in_range({c.B, c.T, c.H, c.K, c.V}))
    rd.fail(where, "B·T·H·K·V must be at most 2^62 (sizes would overflow)");
  c.hot = rd.boolean(j.hot, where, "hot");
  const std::string status = rd.str(j.status, where, "status");
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
    rd.fail(where + ".status", "must be ok, failed, skipped, crashed or timeout");
  r.message = rd.str(j.message, where, "message");
  r.ran_on = rd.str(j.ran_on, where, "ran_on");
  if (r.ran_on != "cuda" && r.ran_on != "host") rd.fail(where + ".ran_on", "must be cuda or host");
  if (j.samples_type == json::value_t::discarded) rd.fail(where + ".samples_ms", "is missing");
  if (j.samples_type != json::value_t::array) rd.fail(where + ".samples_ms", "must be an array");
  for (const double s : j.samples_ms)
    if (!(s > 0) || !std::isfinite(s))
      rd.fail(where + ".samples_ms", "must hold positive finite numbers");
  r.samples_ms = j.samples_ms;
  if (r.status == bench_status::ok && r.samples_ms.empty())
    rd.fail(where + ".samples_ms", "must not be empty when status is ok");
  if (r.status != bench_status::ok && !r.samples_ms.empty())
    rd.fail(where + ".samples_ms", "must be empty unless status is ok");
  if (!r.samples_ms.empty()) r.stats = summarize(r.samples_ms);
  if (j.checks_type == json::value_t::discarded) rd.fail(where + ".checks", "is missing");
  if (j.checks_type != json::value_t::array) rd.fail(where + ".checks", "must be an array");
  for (size_t i = 0; i < j.checks.size(); ++i) {
    const raw_check& ch = j.checks[i];
    const std::string cw = fmt::format("{}.checks[{}]", where, i);
    if (!ch.object) rd.fail(cw, "must be an object");
    // A non-finite rel_l2 (a NaN output) is written as null.
    // max_abs is absent from files written before it was recorded.
    tensor_check c{rd.str(ch.tensor, cw, "tensor"),
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
  explicit row_collector(const reader& rd)
      : rd_(&rd), seen_(0, index_hash{&rows}, index_equal{&rows}) {}
  row_collector& operator=(row_collector&& other) = delete;
  void reset() {
    rows.clear();
    seen_.clear();
  }
  void add(const raw_row& raw) {
    const std::string where = fmt::format("benchmarks[{}]", rows.size());
    rows.push_back(row_from_raw(raw, where, *rd_));
    if (const auto [it, added] = seen_.insert(rows.size() - 1); !added)
      rd_->fail(where, fmt::format("repeats the configuration {} of benchmarks[{}]",
                                   rows.back().config.name(), *it));
  }
  std::vector<bench_row> rows;

 private:
  // The rows seen, by index into `rows`, hashed and compared by configuration.
  struct index_hash {
    const std::vector<bench_row>* rows;
    size_t operator()(size_t i) const { return bench_config_hash()((*rows)[i].config); }
  };
  struct index_equal {
    const std::vector<bench_row>* rows;
    bool operator()(size_t a, size_t b) const { return (*rows)[a].config == (*rows)[b].config; }
  };
  const reader* rd_;
  std::unordered_set<size_t, index_hash, index_equal> seen_;
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

// Reads a results file's JSON in one pass through nlohmann's SAX interface: each row of
// the top-level "benchmarks" array goes straight into a raw_row and to `on_row` — never
// into a JSON object, whose building and freeing cost several times the parse itself on
// a file of many rows — and everything else into `document`, where "benchmarks" is left
// an empty array. Unknown fields of a row are skipped.
class results_sax {
 public:
  results_sax(std::function<void()> on_rows, std::function<void(const raw_row&)> on_row)
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
  // What the innermost open container is.
  enum class kind { top, build, skip, rows, row, samples, checks, check };
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
        if (key_ == "benchmarks" && type == json::value_t::array) {
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
        if (key_ == "samples_ms" && type == json::value_t::array) {
          row_.samples_type = type;
          row_.samples_ms.clear();
          frames_.push_back({kind::samples});
        } else if (key_ == "checks" && type == json::value_t::array) {
          row_.checks_type = type;
          row_.checks.clear();
          frames_.push_back({kind::checks});
        } else {
          row_field(typed(type));
          frames_.push_back({kind::skip});
        }
        break;
      case kind::samples:
        row_.samples_ms.push_back(NAN);
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
    if (key_ == "samples_ms") {
      row_.samples_type = v.type;
      row_.samples_ms.clear();
    } else if (key_ == "checks") {
      row_.checks_type = v.type;
      row_.checks.clear();
    } else if (auto it = row_fields().find(key_); it != row_fields().end()) {
      row_.*(it->second) = std::move(v);
    }
  }
  void check_field(raw_value&& v) {
    if (auto it = check_fields().find(key_); it != check_fields().end())
      check_.*(it->second) = std::move(v);
  }

  std::function<void()> on_rows_;
  std::function<void(const raw_row&)> on_row_;
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
    for (const auto& row : rows) collect.add(raw_row_of(row));
    r.rows = std::move(collect.rows);
    return r;
  } catch (const json::exception& e) {
    // The checks name the field of every type error; this is the net under them.
    throw results_error(fmt::format("{}: a field has the wrong JSON type ({})", source, e.what()));
  }
}

bench_results read_bench_results(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw results_error(path + ": cannot be opened");
  // Read whole, then parsed from memory: several times faster than from the stream.
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw results_error(path + ": cannot be read");
  return bench_results_from_text(std::move(buffer).str(), path);
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
      [&](const raw_row& row) {
        if (!row_error) try {
            collect.add(row);
          } catch (...) {
            row_error = std::current_exception();
          }
      });
  try {
    json::sax_parse(text, &sax);
  } catch (const json::exception& e) {  // parse_error, or out_of_range: a number overflows
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
