// A field of a results file as the readers hold it (raw_value), and the checks on it
// that name the file, the field and the rule when the JSON is wrong (results_checks,
// field_read). Shared by the row description (results_row.hpp) and the readers
// (bench_results.hpp's bench_results_from_text and bench_results_from_json).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_results.hpp"

namespace glabench {

// One JSON value as the readers keep it: a scalar whole; an array element by element
// (an array of numbers as doubles, NaN for an element that is not one: the samples of
// 200,000 rows); an object of a described kind (a row's check) field by field, in
// `items`; an object of any other kind (the backend's report) whole. Type discarded: the
// field is absent. A value of another shape than its field's is kept by its type only.
struct raw_value {
  nlohmann::json::value_t type = nlohmann::json::value_t::discarded;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;
  std::vector<double> numbers;   // an array of numbers
  std::vector<raw_value> items;  // an array's elements, or a described object's fields
  nlohmann::json whole;          // an object kept whole

  explicit raw_value(nlohmann::json::value_t t = nlohmann::json::value_t::discarded) : type(t) {}
  bool present() const { return type != nlohmann::json::value_t::discarded; }
  bool is_number() const {
    using t = nlohmann::json::value_t;
    return type == t::number_integer || type == t::number_unsigned || type == t::number_float;
  }
  double number() const {
    using t = nlohmann::json::value_t;
    return type == t::number_integer    ? double(i)
           : type == t::number_unsigned ? double(u)
           : type == t::number_float    ? d
                                        : NAN;
  }
  // Absent again, keeping what its containers hold allocated (a row's fields are read
  // into the same values row after row).
  void clear() {
    type = nlohmann::json::value_t::discarded;
    s.clear();
    numbers.clear();
    items.clear();
    if (!whole.is_null()) whole = nullptr;
  }
};

// Where a row's field is, spelled out only when an error names it ("benchmarks[3]",
// "benchmarks[3].checks[0]"): the checks run for every field of every row.
struct row_path {
  size_t row = 0;
  std::optional<size_t> check;
};
inline std::string spell(const std::string& where) {
  return where;
}
inline std::string spell(const row_path& where) {
  std::string s = "benchmarks[" + std::to_string(where.row) + "]";
  if (where.check) s += ".checks[" + std::to_string(*where.check) + "]";
  return s;
}

// Field checks that name the file, the field and the rule when the JSON is wrong. Each
// rule is written once, on a value (raw_value); the json-object forms look the field up.
// `where` is a std::string or a row_path.
class results_checks {
 public:
  explicit results_checks(const std::string& source) : source_(source) {}
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
  std::string str(raw_value&& v, const Where& where, const char* key) const {
    present(v, where, key);
    if (v.type != nlohmann::json::value_t::string)
      fail(spell(where) + "." + key, "must be a string");
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
    using t = nlohmann::json::value_t;
    present(v, where, key);
    if (v.type == t::number_unsigned && v.u >= 1 &&
        v.u <= uint64_t(std::numeric_limits<int64_t>::max()))
      return int64_t(v.u);
    if (v.type == t::number_integer && v.i >= 1) return v.i;
    fail(spell(where) + "." + key,
         "must be a positive integer up to 2^63 − 1, written without a fraction or exponent");
  }
  template <typename Where>
  bool boolean(const raw_value& v, const Where& where, const char* key) const {
    present(v, where, key);
    if (v.type != nlohmann::json::value_t::boolean)
      fail(spell(where) + "." + key, "must be true or false");
    return v.b;
  }
  template <typename Where>
  std::optional<double> optional_num(const raw_value& v, const Where& where,
                                     const char* key) const {
    if (!v.present() || v.type == nlohmann::json::value_t::null) return std::nullopt;
    return num(v, where, key);
  }

  // On a field of a JSON object.
  const nlohmann::json& at(const nlohmann::json& obj, const std::string& where,
                           const char* key) const {
    if (!obj.is_object()) fail(where, "must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(where + "." + key, "is missing");
    return *it;
  }
  std::string str(const nlohmann::json& obj, const std::string& where, const char* key) const {
    at(obj, where, key);
    return str(field(obj, key), where, key);
  }
  double num(const nlohmann::json& obj, const std::string& where, const char* key) const {
    at(obj, where, key);
    return num(field(obj, key), where, key);
  }
  // A string, when present.
  void optional_str(const nlohmann::json& obj, const std::string& where, const char* key) const {
    if (raw_value v = field(obj, key); v.present()) str(std::move(v), where, key);
  }
  std::optional<double> optional_num(const nlohmann::json& obj, const std::string& where,
                                     const char* key) const {
    return optional_num(field(obj, key), where, key);
  }

 private:
  // A scalar field of an object as a raw_value (absent: not there, or not an object).
  static raw_value field(const nlohmann::json& obj, const char* key) {
    using t = nlohmann::json::value_t;
    auto it = obj.find(key);  // (none on a non-object)
    if (it == obj.end()) return raw_value();
    raw_value r(it->type());
    switch (it->type()) {
      case t::boolean:
        r.b = it->get<bool>();
        break;
      case t::number_integer:
        r.i = it->get<int64_t>();
        break;
      case t::number_unsigned:
        r.u = it->get<uint64_t>();
        break;
      case t::number_float:
        r.d = it->get<double>();
        break;
      case t::string:
        r.s = it->get<std::string>();
        break;
      default:
        break;
    }
    return r;
  }

  std::string source_;
};

// One field of one row (or check) being read: the file's checks, where the row is, the
// field's key. What a field's reader is given.
struct field_read {
  const results_checks& rd;
  const row_path& where;
  const char* key;

  [[noreturn]] void fail(const std::string& rule) const { rd.fail(spell(where) + "." + key, rule); }
  std::string str(raw_value& v) const { return rd.str(std::move(v), where, key); }
  double num(const raw_value& v) const { return rd.num(v, where, key); }
  int64_t positive_int(const raw_value& v) const { return rd.positive_int(v, where, key); }
  bool boolean(const raw_value& v) const { return rd.boolean(v, where, key); }
  std::optional<double> optional_num(const raw_value& v) const {
    return rd.optional_num(v, where, key);
  }
};

}  // namespace glabench
