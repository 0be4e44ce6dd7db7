#include "bench_results.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>

namespace glabench {

std::string_view bench_status_name(bench_status s) {
  switch (s) {
    case bench_status::ok:
      return "ok";
    case bench_status::failed:
      return "failed";
    case bench_status::skipped:
      return "skipped";
  }
  return "?";
}

std::string peaks_key(bool cuda) {
  return cuda ? "cuda" : "host";
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

// Field access that names the file, the field and the rule when the JSON is wrong.
class reader {
 public:
  reader(const std::string& source) : source_(source) {}
  [[noreturn]] void fail(const std::string& where, const std::string& rule) const {
    throw results_error(fmt::format("{}: {}: {}", source_, where, rule));
  }
  const json& at(const json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) fail(where, "must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(where + "." + key, "is missing");
    return *it;
  }
  std::string str(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    if (!v.is_string()) fail(where + "." + key, "must be a string");
    return v.get<std::string>();
  }
  double num(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(where + "." + key, "must be a finite number");
    return v.get<double>();
  }
  int64_t positive_int(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1)
      fail(where + "." + key, "must be a positive integer");
    return v.get<int64_t>();
  }
  bool boolean(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    if (!v.is_boolean()) fail(where + "." + key, "must be true or false");
    return v.get<bool>();
  }
  std::optional<double> optional_num(const json& obj, const std::string& where,
                                     const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    return num(obj, where, key);
  }

 private:
  std::string source_;
};

bench_row row_from_json(const json& j, const std::string& where, const reader& rd) {
  bench_row r;
  bench_config& c = r.config;
  c.backend = rd.str(j, where, "backend");
  c.op = rd.str(j, where, "op");
  c.dtype = rd.str(j, where, "dtype");
  c.mode = rd.str(j, where, "mode");
  if (c.mode != "fwd" && c.mode != "fwdbwd") rd.fail(where + ".mode", "must be fwd or fwdbwd");
  c.B = rd.positive_int(j, where, "B");
  c.T = rd.positive_int(j, where, "T");
  c.H = rd.positive_int(j, where, "H");
  c.K = rd.positive_int(j, where, "K");
  c.V = rd.positive_int(j, where, "V");
  c.hot = rd.boolean(j, where, "hot");
  const std::string status = rd.str(j, where, "status");
  if (status == "ok")
    r.status = bench_status::ok;
  else if (status == "failed")
    r.status = bench_status::failed;
  else if (status == "skipped")
    r.status = bench_status::skipped;
  else
    rd.fail(where + ".status", "must be ok, failed or skipped");
  r.message = rd.str(j, where, "message");
  r.ran_on = rd.str(j, where, "ran_on");
  if (r.ran_on != "cuda" && r.ran_on != "host") rd.fail(where + ".ran_on", "must be cuda or host");
  const json& samples = rd.at(j, where, "samples_ms");
  if (!samples.is_array()) rd.fail(where + ".samples_ms", "must be an array");
  for (const auto& s : samples) {
    if (!s.is_number() || !(s.get<double>() > 0) || !std::isfinite(s.get<double>()))
      rd.fail(where + ".samples_ms", "must hold positive finite numbers");
    r.samples_ms.push_back(s.get<double>());
  }
  if (r.status == bench_status::ok && r.samples_ms.empty())
    rd.fail(where + ".samples_ms", "must not be empty when status is ok");
  if (r.status != bench_status::ok && !r.samples_ms.empty())
    rd.fail(where + ".samples_ms", "must be empty unless status is ok");
  if (!r.samples_ms.empty()) r.stats = summarize(r.samples_ms);
  const json& checks = rd.at(j, where, "checks");
  if (!checks.is_array()) rd.fail(where + ".checks", "must be an array");
  for (size_t i = 0; i < checks.size(); ++i) {
    const std::string cw = fmt::format("{}.checks[{}]", where, i);
    // A non-finite rel_l2 (a NaN output) is written as null.
    // max_abs is absent from files written before it was recorded.
    tensor_check c{rd.str(checks[i], cw, "tensor"),
                   rd.optional_num(checks[i], cw, "rel_l2").value_or(NAN),
                   rd.num(checks[i], cw, "threshold"), rd.boolean(checks[i], cw, "passed")};
    c.max_abs = rd.optional_num(checks[i], cw, "max_abs").value_or(NAN);
    c.finite = std::isfinite(c.rel_l2);
    r.checks.push_back(std::move(c));
  }
  r.bytes = rd.num(j, where, "bytes");
  r.flops = rd.num(j, where, "flops");
  r.noise_target_met = rd.boolean(j, where, "noise_target_met");
  r.wall_s = rd.optional_num(j, where, "wall_s");
  r.gbps = rd.optional_num(j, where, "gbps");
  r.tflops = rd.optional_num(j, where, "tflops");
  r.bandwidth_fraction = rd.optional_num(j, where, "bandwidth_fraction");
  r.flop_fraction = rd.optional_num(j, where, "flop_fraction");
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

bench_results bench_results_from_json(const json& j, const std::string& source) {
  const reader rd(source);
  const json& context = rd.at(j, "(top level)", "context");
  if (!context.is_object()) rd.fail("context", "must be an object");
  if (context.value("glabench_results", std::string()) != "bench")
    rd.fail("context.glabench_results",
            "must be \"bench\" (this is not a glabench bench results file)");
  const json& version = rd.at(context, "context", "schema_version");
  if (!version.is_number_integer() || version.get<int>() != kBenchSchemaVersion)
    rd.fail("context.schema_version", fmt::format("must be {}", kBenchSchemaVersion));

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
    p.notes = rd.str(entry, w, "notes");
    r.peaks[where] = p;
  }
  r.context.erase("peaks");

  const json& rows = rd.at(j, "(top level)", "benchmarks");
  if (!rows.is_array()) rd.fail("benchmarks", "must be an array");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string where = fmt::format("benchmarks[{}]", i);
    r.rows.push_back(row_from_json(rows[i], where, rd));
    for (size_t k = 0; k + 1 < r.rows.size(); ++k)
      if (r.rows[k].config == r.rows.back().config)
        rd.fail(where, "repeats the configuration " + r.rows.back().config.name());
  }
  return r;
}

bench_results read_bench_results(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw results_error(path + ": cannot be opened");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw results_error(path + ": not valid JSON (" + e.what() + ")");
  }
  return bench_results_from_json(j, path);
}

}  // namespace glabench
