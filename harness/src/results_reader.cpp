// The readers of results files (bench_results.hpp): one handler of nlohmann's SAX
// events reads a results file's text as nlohmann's parser reads it, and a parsed document
// (a worker's reply) walked through the same handler, so both check the same rules and
// give the same messages. Each row goes straight into a raw_row, never into a JSON
// object — whose building and freeing cost several times the parse itself on a file of
// many rows — and is checked by the row description (results_row.hpp) as it completes.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "bench_results.hpp"
#include "json_depth.hpp"
#include "results_row.hpp"

namespace glabench {
namespace {

using nlohmann::json;
using value_t = json::value_t;

// The rows, each checked as it comes and against those before it (the configuration is
// the key compare matches by: no repeats), in O(n) on average.
class row_collector {
 public:
  explicit row_collector(const results_checks& rd) : rd_(&rd), seen_(rows) {}
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
  const results_checks* rd_;
  config_index seen_;  // the rows so far, by configuration
};

// Everything but the rows: that the file is ours, its schema version, the context fields
// read back as typed values, the peaks.
bench_results results_context_from_json(const json& j, const results_checks& rd) {
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
    case value_t::boolean:
      return v.b;
    case value_t::number_integer:
      return v.i;
    case value_t::number_unsigned:
      return v.u;
    case value_t::number_float:
      return v.d;
    case value_t::string:
      return std::move(v.s);
    default:
      return nullptr;
  }
}

// nlohmann's SAX events of a results file: each row of the top-level "benchmarks" array
// into a raw_row, by the row description's keys and shapes, and to `on_row`; everything
// else into `document`, where "benchmarks" is left an empty array. Unknown fields of a
// row are skipped, and so are the fields only written.
class results_sax {
 public:
  results_sax(std::function<void()> on_rows, std::function<void(raw_row&)> on_row)
      : on_rows_(std::move(on_rows)), on_row_(std::move(on_row)) {}
  json document;

  bool null() { return scalar(raw_value(value_t::null)); }
  bool boolean(bool b) {
    raw_value v(value_t::boolean);
    v.b = b;
    return scalar(std::move(v));
  }
  bool number_integer(json::number_integer_t i) {
    raw_value v(value_t::number_integer);
    v.i = i;
    return scalar(std::move(v));
  }
  bool number_unsigned(json::number_unsigned_t u) {
    raw_value v(value_t::number_unsigned);
    v.u = u;
    return scalar(std::move(v));
  }
  bool number_float(json::number_float_t d, const std::string&) {
    raw_value v(value_t::number_float);
    v.d = d;
    return scalar(std::move(v));
  }
  bool string(std::string& s) {
    raw_value v(value_t::string);
    v.s = std::move(s);
    return scalar(std::move(v));
  }
  bool binary(json::binary_t&) { return scalar(raw_value(value_t::binary)); }  // not in JSON text
  bool key(std::string& k) {
    key_.swap(k);
    return true;
  }
  bool start_object(std::size_t) { return open(value_t::object); }
  bool start_array(std::size_t) { return open(value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  // Thrown where the objects and arrays nest deeper than kMaxJsonDepth: deeper than
  // glabench ever writes, and refused before any recursive step (printing, plotting)
  // can meet it.
  struct too_deep {};
  // Thrown as the parser made it (parse_error, or out_of_range for a number too large).
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

 private:
  // What the innermost open container is.
  enum class kind { top, build, skip, rows, row, array, check };
  struct frame {
    kind what;
    json* target = nullptr;                   // build: the container being built
    raw_value* field = nullptr;               // array: the row's field; check: the check
    int depth = 0;                            // skip: containers open inside the skipped one
    field_shape shape = field_shape::scalar;  // array: the field's
  };

  // The row's field named key_, absent again (the last of repeated keys counts, as in a
  // parsed JSON object); null for a key the row description does not read.
  raw_value* row_field(value_t type, field_shape* shape) {
    const int i = row_field_index(key_);
    if (i < 0) return nullptr;
    raw_value& v = row_.fields[size_t(i)];
    v.clear();
    v.type = type;
    *shape = row_field_shape(i);
    return &v;
  }

  bool open(value_t type) {
    if (++depth_ > kMaxJsonDepth) throw too_deep();
    const json container = type == value_t::object ? json::object() : json::array();
    if (frames_.empty()) {
      document = container;
      frames_.push_back({type == value_t::object ? kind::top : kind::build, &document});
      return true;
    }
    frame& f = frames_.back();
    switch (f.what) {
      case kind::top:
        if (key_ == "benchmarks" && type == value_t::array) {
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
        row_.clear();
        row_.object = type == value_t::object;
        if (row_.object) {
          frames_.push_back({kind::row});
        } else {
          on_row_(row_);
          frames_.push_back({kind::skip});
        }
        break;
      case kind::row: {
        field_shape shape = field_shape::scalar;
        raw_value* v = row_field(type, &shape);
        if (v && type == value_t::array && shape != field_shape::scalar &&
            shape != field_shape::object) {
          frames_.push_back({kind::array, nullptr, v, 0, shape});
        } else if (v && type == value_t::object && shape == field_shape::object) {
          v->whole = json::object();  // kept whole: built as the document is
          frames_.push_back({kind::build, &v->whole});
        } else {
          frames_.push_back({kind::skip});  // (a container where a scalar belongs: its type only)
        }
        break;
      }
      case kind::array: {
        raw_value& field = *f.field;
        if (f.shape == field_shape::numbers) {
          field.numbers.push_back(NAN);  // not a sample
          frames_.push_back({kind::skip});
        } else if (f.shape == field_shape::checks && type == value_t::object) {
          raw_value& check = field.items.emplace_back(type);
          check.items.resize(check_field_count());
          frames_.push_back({kind::check, nullptr, &check});
        } else {
          field.items.emplace_back(type);  // not a device number, or not a check
          frames_.push_back({kind::skip});
        }
        break;
      }
      case kind::check:
        if (const int i = check_field_index(key_); i >= 0) {
          f.field->items[size_t(i)].clear();
          f.field->items[size_t(i)].type = type;
        }
        frames_.push_back({kind::skip});
        break;
    }
    return true;
  }

  bool close() {
    --depth_;
    frame& f = frames_.back();
    if (f.what == kind::skip && f.depth > 0) {
      --f.depth;
      return true;
    }
    const kind what = f.what;
    frames_.pop_back();
    if (what == kind::row) on_row_(row_);
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
        row_.clear();
        row_.object = false;
        on_row_(row_);
        break;
      case kind::row: {
        field_shape shape = field_shape::scalar;
        if (raw_value* field = row_field(v.type, &shape))
          *field = std::move(v);  // (a scalar where a container belongs: its type only)
        break;
      }
      case kind::array:
        if (f.shape == field_shape::numbers)
          f.field->numbers.push_back(v.number());  // NaN for a non-number: not a sample
        else
          f.field->items.push_back(std::move(v));  // a device number, or not a check
        break;
      case kind::check:
        if (const int i = check_field_index(key_); i >= 0) f.field->items[size_t(i)] = std::move(v);
        break;
    }
    return true;
  }

  std::function<void()> on_rows_;
  std::function<void(raw_row&)> on_row_;  // may move from the row
  std::vector<frame> frames_;
  std::string key_;   // the key of the value being read
  raw_row row_;       // the row being read
  size_t depth_ = 0;  // objects and arrays open
};

// Hands `sax` the events of a parsed document, as nlohmann's parser would of its text
// (objects' keys in the document's order).
void walk(const json& j, results_sax& sax) {
  switch (j.type()) {
    case value_t::object: {
      sax.start_object(j.size());
      for (const auto& [k, v] : j.items()) {
        std::string key = k;
        sax.key(key);
        walk(v, sax);
      }
      sax.end_object();
      break;
    }
    case value_t::array:
      sax.start_array(j.size());
      for (const json& v : j) walk(v, sax);
      sax.end_array();
      break;
    case value_t::boolean:
      sax.boolean(j.get<bool>());
      break;
    case value_t::number_integer:
      sax.number_integer(j.get<int64_t>());
      break;
    case value_t::number_unsigned:
      sax.number_unsigned(j.get<uint64_t>());
      break;
    case value_t::number_float:
      sax.number_float(j.get<double>(), {});
      break;
    case value_t::string: {
      std::string s = j.get<std::string>();
      sax.string(s);
      break;
    }
    case value_t::binary: {
      json::binary_t b = j.get_binary();
      sax.binary(b);
      break;
    }
    default:
      sax.null();
      break;
  }
}

// Reads a results file's events (`feed` hands them to the handler it is given) into
// results, checking each row as the reader completes it; the first bad row's error is
// kept and raised after the context's checks, so that a file that is not ours is
// reported as that.
bench_results read_results(const std::string& source,
                           const std::function<void(results_sax&)>& feed) {
  const results_checks rd(source);
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
  feed(sax);
  try {
    bench_results r = results_context_from_json(sax.document, rd);
    const json& rows = rd.at(sax.document, "(top level)", "benchmarks");
    if (!rows.is_array()) rd.fail("benchmarks", "must be an array");
    if (row_error) std::rethrow_exception(row_error);
    r.rows = std::move(collect.rows);
    return r;
  } catch (const json::exception& e) {
    // The checks name the field of every type error; this is the net under them.
    throw results_error(fmt::format("{}: a field has the wrong JSON type ({})", source, e.what()));
  }
}

}  // namespace

bench_results bench_results_from_json(const json& j, const std::string& source) {
  return read_results(source, [&](results_sax& sax) {
    try {
      walk(j, sax);
    } catch (const results_sax::too_deep&) {
      throw results_error(source + ": objects and arrays nest deeper than " +
                          std::to_string(kMaxJsonDepth) + " levels");
    }
  });
}

bench_results bench_results_from_text(const std::string& text, const std::string& source) {
  return read_results(source, [&](results_sax& sax) {
    try {
      json::sax_parse(text, &sax);
    } catch (const json::exception& e) {  // malformed, or a number that overflows
      throw results_error(source + ": not valid JSON (" + e.what() + ")");
    } catch (const results_sax::too_deep&) {
      throw results_error(source + ": not valid JSON (" + json_nesting_error(text, kMaxJsonDepth) +
                          ")");
    }
  });
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

}  // namespace glabench
