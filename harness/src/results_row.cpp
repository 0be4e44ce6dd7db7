#include "results_row.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bench_shapes.hpp"
#include "gate_regime.hpp"

namespace glabench {
namespace {

using nlohmann::json;
using value_t = json::value_t;

const json kLeftOut(value_t::discarded);

// NaN and infinities are not JSON: written as null (and read back as NaN).
json finite_or_null(double x) {
  return std::isfinite(x) ? json(x) : json(nullptr);
}
json optional_number(const std::optional<double>& x) {
  return x ? json(*x) : json(nullptr);
}
double median_of(const bench_row& r) {
  return r.stats ? r.stats->median : 0;
}
// A statistic of the samples, where there are some.
template <double sample_summary::*member>
json statistic(const bench_row& r) {
  return r.stats ? json((*r.stats).*member) : kLeftOut;
}

// ---- a check ----------------------------------------------------------------------------

constexpr results_field<tensor_check> kCheckFields[] = {
    {"tensor", field_shape::scalar, [](const tensor_check& c) { return json(c.tensor); },
     [](raw_value& v, const field_read& at, tensor_check& c) { c.tensor = at.str(v); }},
    // A non-finite rel_l2 (a NaN output) is written as null.
    {"rel_l2", field_shape::scalar, [](const tensor_check& c) { return finite_or_null(c.rel_l2); },
     [](raw_value& v, const field_read& at, tensor_check& c) {
       c.rel_l2 = at.optional_num(v).value_or(NAN);
       c.finite = std::isfinite(c.rel_l2);
     }},
    {"threshold", field_shape::scalar, [](const tensor_check& c) { return json(c.threshold); },
     [](raw_value& v, const field_read& at, tensor_check& c) { c.threshold = at.num(v); }},
    {"passed", field_shape::scalar, [](const tensor_check& c) { return json(c.passed); },
     [](raw_value& v, const field_read& at, tensor_check& c) { c.passed = at.boolean(v); }},
    // Absent from files written before it was recorded.
    {"max_abs", field_shape::scalar,
     [](const tensor_check& c) { return finite_or_null(c.max_abs); },
     [](raw_value& v, const field_read& at, tensor_check& c) {
       c.max_abs = at.optional_num(v).value_or(NAN);
     }},
};

// ---- a row's fields with rules of their own -----------------------------------------------

// Absent in files from before regimes: bench then drew every gate as "mild" does.
void read_gates(raw_value& v, const field_read& at, bench_row& r) {
  bench_config& c = r.config;
  const bool gated = std::string_view(c.op) == "gla" || std::string_view(c.op) == "rwkv6";
  if (!v.present()) {
    if (gated) c.gates = kDefaultGateRegime;
    return;
  }
  c.gates = at.str(v);
  if (!gated && !c.gates.empty()) at.fail("must be absent or empty for an op without gates");
  if (gated && !find_gate_regime(c.gates)) {
    std::string names;
    for (const gate_regime& g : gate_regimes()) (names += names.empty() ? "" : ", ") += g.name;
    at.fail("must be one of " + names);
  }
}

// A packed batch's sequence lengths: absent for B sequences of T tokens; else integers
// from 1 to 2^31 − 1 that make a packed batch of the row's B and T (check_packed_shape).
void read_seqlens(raw_value& v, const field_read& at, bench_row& r) {
  r.config.seqlens.clear();
  if (!v.present()) return;
  if (v.type != value_t::array || v.items.empty()) at.fail("must be a non-empty array");
  for (const raw_value& n : v.items) {
    const bool whole = (n.type == value_t::number_unsigned && n.u >= 1 && n.u <= INT32_MAX) ||
                       (n.type == value_t::number_integer && n.i >= 1 && n.i <= INT32_MAX);
    if (!whole) at.fail("must hold sequence lengths: integers from 1 to 2^31 − 1");
    r.config.seqlens.push_back(n.type == value_t::number_unsigned ? int64_t(n.u) : n.i);
  }
  try {
    check_packed_shape(
        {r.config.B, r.config.T, r.config.H, r.config.K, r.config.V, r.config.seqlens});
  } catch (const std::invalid_argument& e) {
    at.fail(e.what());
  }
}

// The row's devices: absent in files from before they were recorded (then [0]); else a
// non-empty array of device numbers, each a JSON integer from 0 to 2^31 − 1, none twice.
void read_devices(raw_value& v, const field_read& at, bench_row& r) {
  if (v.present()) {
    if (v.type != value_t::array) at.fail("must be an array");
    if (v.items.empty()) at.fail("must not be empty");
    r.devices.clear();
    r.devices.reserve(v.items.size());
    for (const raw_value& d : v.items) {
      const bool whole = (d.type == value_t::number_unsigned && d.u <= INT32_MAX) ||
                         (d.type == value_t::number_integer && d.i >= 0 && d.i <= INT32_MAX);
      if (!whole)
        at.fail(
            "must hold device numbers: integers from 0 to 2^31 − 1, written without a fraction "
            "or exponent");
      r.devices.push_back(int32_t(d.type == value_t::number_unsigned ? int64_t(d.u) : d.i));
    }
    std::vector<int32_t> sorted = r.devices;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      at.fail("must not name a device twice");
  }
  r.config.num_devices = int32_t(r.devices.size());
}

void read_status(raw_value& v, const field_read& at, bench_row& r) {
  const std::string text = at.str(v);
  for (bench_status s : {bench_status::ok, bench_status::failed, bench_status::skipped,
                         bench_status::crashed, bench_status::timeout})
    if (bench_status_name(s) == text) {
      r.status = s;
      return;
    }
  at.fail("must be ok, failed, skipped, crashed or timeout");
}

// Every sample positive and finite; some when the status is ok, none otherwise.
void read_samples(raw_value& v, const field_read& at, bench_row& r) {
  if (!v.present()) at.fail("is missing");
  if (v.type != value_t::array) at.fail("must be an array");
  for (const double s : v.numbers)
    if (!(s > 0) || !std::isfinite(s)) at.fail("must hold positive finite numbers");
  r.samples_ms = std::move(v.numbers);
  if (r.status == bench_status::ok && r.samples_ms.empty())
    at.fail("must not be empty when status is ok");
  if (r.status != bench_status::ok && !r.samples_ms.empty())
    at.fail("must be empty unless status is ok");
  if (!r.samples_ms.empty()) r.stats = summarize(r.samples_ms);
}

void read_checks(raw_value& v, const field_read& at, bench_row& r) {
  if (!v.present()) at.fail("is missing");
  if (v.type != value_t::array) at.fail("must be an array");
  r.checks.reserve(v.items.size());
  for (size_t i = 0; i < v.items.size(); ++i) {
    raw_value& raw = v.items[i];
    const row_path where{at.where.row, i};
    if (raw.type != value_t::object) at.rd.fail(spell(where), "must be an object");
    tensor_check c;
    for (size_t f = 0; f < std::size(kCheckFields); ++f)
      kCheckFields[f].read(raw.items[f], {at.rd, where, kCheckFields[f].key.data()}, c);
    r.checks.push_back(std::move(c));
  }
}

json write_checks(const bench_row& r) {
  json checks = json::array();
  for (const tensor_check& c : r.checks) {
    json j = json::object();
    for (const auto& f : kCheckFields) j[std::string(f.key)] = f.write(c);
    checks.push_back(std::move(j));
  }
  return checks;
}

// The last of B, T, H, K, V: the shape's product must not overflow.
void read_V(raw_value& v, const field_read& at, bench_row& r) {
  bench_config& c = r.config;
  c.V = at.positive_int(v);
  if (!shape_in_range({c.B, c.T, c.H, c.K, c.V}))
    at.rd.fail(spell(at.where), "B·T·H·K·V must be at most 2^62 (sizes would overflow)");
}

// ---- the row ------------------------------------------------------------------------------

#define GLABENCH_CONFIG_STRING(name)                                                               \
  {                                                                                                \
#name, field_shape::scalar,                                                                    \
        [](const bench_row&                                                                        \
               r) { return json(r.config.name); }, [](raw_value & v, const field_read& at,         \
                                                      bench_row& r) { r.config.name = at.str(v); } \
  }
#define GLABENCH_CONFIG_SIZE(name)                                                                \
  {                                                                                               \
#name, field_shape::scalar,                                                                   \
        [](const bench_row&                                                                       \
               r) { return json(r.config.name); },                                                \
                                                [](raw_value & v, const field_read& at,           \
                                                   bench_row&                                     \
                                                       r) { r.config.name = at.positive_int(v); } \
  }
#define GLABENCH_OPTIONAL_NUMBER(name)                                                            \
  {                                                                                               \
#name, field_shape::scalar,                                                                   \
        [](const bench_row&                                                                       \
               r) { return optional_number(r.name); }, [](raw_value & v, const field_read& at,    \
                                                          bench_row&                              \
                                                              r) { r.name = at.optional_num(v); } \
  }
#define GLABENCH_STATISTIC(key, member) \
  { key, field_shape::scalar, statistic<&sample_summary::member>, nullptr }

// In the order the readers check them: a field's rule may look at those before it.
constexpr results_field<bench_row> kRowFields[] = {
    GLABENCH_CONFIG_STRING(backend),
    GLABENCH_CONFIG_STRING(op),
    GLABENCH_CONFIG_STRING(dtype),
    {"mode", field_shape::scalar, [](const bench_row& r) { return json(r.config.mode); },
     [](raw_value& v, const field_read& at, bench_row& r) {
       r.config.mode = at.str(v);
       if (std::string_view(r.config.mode) != "fwd" && std::string_view(r.config.mode) != "fwdbwd")
         at.fail("must be fwd or fwdbwd");
     }},
    GLABENCH_CONFIG_SIZE(B),
    GLABENCH_CONFIG_SIZE(T),
    GLABENCH_CONFIG_SIZE(H),
    GLABENCH_CONFIG_SIZE(K),
    {"V", field_shape::scalar, [](const bench_row& r) { return json(r.config.V); }, read_V},
    {"seqlens", field_shape::scalars,
     [](const bench_row& r) {
       return r.config.seqlens.empty() ? kLeftOut : json(r.config.seqlens);
     },
     read_seqlens},
    {"hot", field_shape::scalar, [](const bench_row& r) { return json(r.config.hot); },
     [](raw_value& v, const field_read& at, bench_row& r) { r.config.hot = at.boolean(v); }},
    // Absent in files from before the mask was recorded: bench then ran causal only.
    {"causal", field_shape::scalar, [](const bench_row& r) { return json(r.config.causal); },
     [](raw_value& v, const field_read& at, bench_row& r) {
       r.config.causal = !v.present() || at.boolean(v);
     }},
    {"gates", field_shape::scalar,
     [](const bench_row& r) { return r.config.gates.empty() ? kLeftOut : json(r.config.gates); },
     read_gates},
    // Absent in files from before it was recorded: eager.
    {"timing", field_shape::scalar, [](const bench_row& r) { return json(r.config.timing); },
     [](raw_value& v, const field_read& at, bench_row& r) {
       if (!v.present()) return;
       r.config.timing = at.str(v);
       if (std::string_view(r.config.timing) != "eager" &&
           std::string_view(r.config.timing) != "graph")
         at.fail("must be eager or graph");
     }},
    {"devices", field_shape::scalars, [](const bench_row& r) { return json(r.devices); },
     read_devices},
    {"backend_report", field_shape::object,
     [](const bench_row& r) { return r.backend_report.is_null() ? kLeftOut : r.backend_report; },
     [](raw_value& v, const field_read& at, bench_row& r) {
       if (!v.present() || v.type == value_t::null) return;
       if (v.type != value_t::object) at.fail("must be an object or null");
       r.backend_report = std::move(v.whole);
     }},
    {"status", field_shape::scalar,
     [](const bench_row& r) { return json(bench_status_name(r.status)); }, read_status},
    {"message", field_shape::scalar, [](const bench_row& r) { return json(r.message); },
     [](raw_value& v, const field_read& at, bench_row& r) { r.message = at.str(v); }},
    {"ran_on", field_shape::scalar, [](const bench_row& r) { return json(r.ran_on); },
     [](raw_value& v, const field_read& at, bench_row& r) {
       r.ran_on = at.str(v);
       if (std::string_view(r.ran_on) != "cuda" && std::string_view(r.ran_on) != "host")
         at.fail("must be cuda or host");
     }},
    {"samples_ms", field_shape::numbers, [](const bench_row& r) { return json(r.samples_ms); },
     read_samples},
    {"checks", field_shape::checks, write_checks, read_checks},
    {"bytes", field_shape::scalar, [](const bench_row& r) { return json(r.bytes); },
     [](raw_value& v, const field_read& at, bench_row& r) { r.bytes = at.num(v); }},
    {"flops", field_shape::scalar, [](const bench_row& r) { return json(r.flops); },
     [](raw_value& v, const field_read& at, bench_row& r) { r.flops = at.num(v); }},
    {"noise_target_met", field_shape::scalar,
     [](const bench_row& r) { return json(r.noise_target_met); },
     [](raw_value& v, const field_read& at, bench_row& r) { r.noise_target_met = at.boolean(v); }},
    GLABENCH_OPTIONAL_NUMBER(wall_s),
    GLABENCH_OPTIONAL_NUMBER(gbps),
    GLABENCH_OPTIONAL_NUMBER(tflops),
    GLABENCH_OPTIONAL_NUMBER(bandwidth_fraction),
    GLABENCH_OPTIONAL_NUMBER(flop_fraction),
    {"timed_outputs_identical", field_shape::scalar,
     [](const bench_row& r) {
       return r.timed_outputs_identical ? json(*r.timed_outputs_identical) : kLeftOut;
     },
     [](raw_value& v, const field_read& at, bench_row& r) {
       if (v.present()) r.timed_outputs_identical = at.boolean(v);
     }},
    // null: a NaN or Inf (the row then failed).
    {"timed_outputs_rel_l2", field_shape::scalar,
     [](const bench_row& r) {
       return r.timed_outputs_rel_l2 ? finite_or_null(*r.timed_outputs_rel_l2) : kLeftOut;
     },
     [](raw_value& v, const field_read& at, bench_row& r) {
       if (v.present()) r.timed_outputs_rel_l2 = at.optional_num(v).value_or(NAN);
     }},
    // Written only: Google Benchmark's fields, so that its readers read the file; the
    // statistics of the samples, for a reader of the JSON (glabench's compute them).
    {"name", field_shape::scalar, [](const bench_row& r) { return json(r.config.name()); },
     nullptr},
    {"run_name", field_shape::scalar, [](const bench_row& r) { return json(r.config.name()); },
     nullptr},
    {"run_type", field_shape::scalar, [](const bench_row&) { return json("iteration"); }, nullptr},
    {"repetitions", field_shape::scalar,
     [](const bench_row& r) { return json(r.samples_ms.size()); }, nullptr},
    {"repetition_index", field_shape::scalar, [](const bench_row&) { return json(0); }, nullptr},
    {"threads", field_shape::scalar, [](const bench_row&) { return json(1); }, nullptr},
    {"iterations", field_shape::scalar,
     [](const bench_row& r) { return json(r.samples_ms.size()); }, nullptr},
    {"real_time", field_shape::scalar, [](const bench_row& r) { return json(median_of(r)); },
     nullptr},
    {"cpu_time", field_shape::scalar, [](const bench_row& r) { return json(median_of(r)); },
     nullptr},
    {"time_unit", field_shape::scalar, [](const bench_row&) { return json("ms"); }, nullptr},
    // Google Benchmark's readers skip such entries.
    {"error_occurred", field_shape::scalar,
     [](const bench_row& r) { return r.status != bench_status::ok ? json(true) : kLeftOut; },
     nullptr},
    {"error_message", field_shape::scalar,
     [](const bench_row& r) { return r.status != bench_status::ok ? json(r.message) : kLeftOut; },
     nullptr},
    GLABENCH_STATISTIC("median_ms", median),
    GLABENCH_STATISTIC("p20_ms", p20),
    GLABENCH_STATISTIC("p80_ms", p80),
    GLABENCH_STATISTIC("min_ms", min),
    GLABENCH_STATISTIC("max_ms", max),
    GLABENCH_STATISTIC("mean_ms", mean),
    GLABENCH_STATISTIC("stddev_ms", stddev),
    GLABENCH_STATISTIC("cv", cv),
};

#undef GLABENCH_CONFIG_STRING
#undef GLABENCH_CONFIG_SIZE
#undef GLABENCH_OPTIONAL_NUMBER
#undef GLABENCH_STATISTIC

// The fields a reader reads, by key: a key is looked up for every field of every row,
// so among the fields of its length only.
class field_lookup {
 public:
  template <typename Target, size_t N>
  explicit field_lookup(const results_field<Target> (&fields)[N]) {
    for (size_t i = 0; i < N; ++i)
      if (fields[i].read && fields[i].key.size() < by_length_.size())
        by_length_[fields[i].key.size()].push_back({fields[i].key, int(i)});
  }
  int find(std::string_view key) const {
    if (key.size() >= by_length_.size()) return -1;
    for (const auto& [name, index] : by_length_[key.size()])
      if (name == key) return index;
    return -1;
  }

 private:
  std::array<std::vector<std::pair<std::string_view, int>>, 32> by_length_;
};

}  // namespace

raw_row::raw_row() : fields(std::size(kRowFields)) {}

void raw_row::clear() {
  object = true;
  for (raw_value& v : fields) v.clear();
}

int row_field_index(std::string_view key) {
  static const field_lookup fields(kRowFields);
  return fields.find(key);
}
int check_field_index(std::string_view key) {
  static const field_lookup fields(kCheckFields);
  return fields.find(key);
}
field_shape row_field_shape(int index) {
  return kRowFields[index].shape;
}
size_t check_field_count() {
  return std::size(kCheckFields);
}

json row_to_json(const bench_row& r) {
  json j = json::object();
  for (const auto& f : kRowFields)
    if (json v = f.write(r); !v.is_discarded()) j[std::string(f.key)] = std::move(v);
  return j;
}

bench_row row_from_raw(raw_row& raw, const row_path& where, const results_checks& rd) {
  if (!raw.object) rd.fail(spell(where), "must be an object");
  bench_row r;
  for (size_t i = 0; i < std::size(kRowFields); ++i)
    if (kRowFields[i].read)
      kRowFields[i].read(raw.fields[i], {rd, where, kRowFields[i].key.data()}, r);
  return r;
}

}  // namespace glabench
