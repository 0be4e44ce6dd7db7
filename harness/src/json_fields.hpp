// A struct that crosses to a worker process (or into a JSON file) is described once, as
// the list of its fields, in a generic lambda over a field visitor and the struct:
//
//   inline constexpr auto problem_fields = [](auto& f, auto& p) {
//     f.named("op", p.op, op_name, parse_op);
//     f("B", p.B);
//     ...
//   };
//
// That one list writes the struct (to_json_by(p, problem_fields): the visitor is a
// field_writer and p const) and reads it back (from_json_by(j, problem_fields)), so the
// two sides cannot disagree on a key, and it can be walked for anything else. A field
// is a value nlohmann converts (numbers, strings, booleans and vectors of them), or a
// described struct, a vector of them or an optional one, given with its own description.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace glabench {

namespace json_fields_detail {
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace json_fields_detail

// Writes the fields it is shown into an object.
class field_writer {
 public:
  explicit field_writer(nlohmann::json& out) : out_(&out) { *out_ = nlohmann::json::object(); }

  // A value nlohmann converts; an optional one is left out when empty.
  template <typename V>
  void operator()(const char* key, const V& v) {
    if constexpr (json_fields_detail::is_optional<V>::value) {
      if (v) (*out_)[key] = *v;
    } else {
      (*out_)[key] = v;
    }
  }
  // A described struct (`describe`), a vector of them (an array), or an optional one
  // (left out when empty).
  template <typename V, typename Describe>
  void operator()(const char* key, const V& v, const Describe& describe) {
    if (nlohmann::json x = write(v, describe); !x.is_discarded()) (*out_)[key] = std::move(x);
  }
  // An enum by its name; an optional one is left out when empty.
  template <typename E, typename Name, typename Parse>
  void named(const char* key, const E& e, Name name, Parse) {
    if constexpr (json_fields_detail::is_optional<E>::value) {
      if (e) (*out_)[key] = std::string(name(*e));
    } else {
      (*out_)[key] = std::string(name(e));
    }
  }
  // A number that may be NaN or infinite: JSON has neither, so null (read back as NaN).
  void number_or_null(const char* key, const double& x) {
    (*out_)[key] = std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  }
  // Written only where `written` holds; read where present.
  template <typename V>
  void present_if(bool written, const char* key, const V& v) {
    if (written) (*this)(key, v);
  }
  // Doubles as their bytes (CBOR binary, not numbers: a fixture's tensors).
  void bytes(const char* key, const std::vector<double>& values) {
    std::vector<std::uint8_t> raw(values.size() * sizeof(double));
    if (!raw.empty()) std::memcpy(raw.data(), values.data(), raw.size());
    (*out_)[key] = nlohmann::json::binary(std::move(raw));
  }

 private:
  template <typename V, typename Describe>
  static nlohmann::json write(const V& v, const Describe& describe) {
    if constexpr (json_fields_detail::is_optional<V>::value) {
      return v ? write(*v, describe) : nlohmann::json(nlohmann::json::value_t::discarded);
    } else if constexpr (json_fields_detail::is_vector<V>::value) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& x : v) a.push_back(write(x, describe));
      return a;
    } else {
      nlohmann::json j;
      field_writer w(j);
      describe(w, v);
      return j;
    }
  }
  nlohmann::json* out_;

  template <typename V, typename Describe>
  friend nlohmann::json to_json_by(const V& v, const Describe& describe);
};

// Reads the fields it is shown from an object; a missing key or a wrong type throws
// nlohmann's exception, which names the key.
class field_reader {
 public:
  explicit field_reader(const nlohmann::json& in) : in_(&in) {}

  template <typename V>
  void operator()(const char* key, V& v) const {
    if constexpr (json_fields_detail::is_optional<V>::value) {
      const auto it = in_->find(key);
      if (it == in_->end() || it->is_null())
        v.reset();
      else
        v = it->template get<typename V::value_type>();
    } else {
      in_->at(key).get_to(v);
    }
  }
  template <typename V, typename Describe>
  void operator()(const char* key, V& v, const Describe& describe) const {
    if constexpr (json_fields_detail::is_optional<V>::value) {
      const auto it = in_->find(key);
      if (it == in_->end() || it->is_null()) {
        v.reset();
        return;
      }
      v.emplace();
      read(*it, *v, describe);
    } else {
      read(in_->at(key), v, describe);
    }
  }
  template <typename E, typename Name, typename Parse>
  void named(const char* key, E& e, Name, Parse parse) const {
    if constexpr (json_fields_detail::is_optional<E>::value) {
      const auto it = in_->find(key);
      if (it == in_->end() || it->is_null()) {
        e.reset();
        return;
      }
    }
    const std::string name = in_->at(key).get<std::string>();
    const auto parsed = parse(name);
    if (!parsed) throw std::runtime_error(std::string(key) + ": unknown name '" + name + "'");
    e = *parsed;
  }
  void number_or_null(const char* key, double& x) const {
    const nlohmann::json& v = in_->at(key);
    x = v.is_null() ? NAN : v.get<double>();
  }
  template <typename V>
  void present_if(bool, const char* key, V& v) const {
    if (in_->contains(key)) (*this)(key, v);
  }
  void bytes(const char* key, std::vector<double>& values) const {
    const auto& raw = in_->at(key).get_binary();
    if (raw.size() % sizeof(double))
      throw std::runtime_error(std::string(key) + ": not whole doubles");
    values.resize(raw.size() / sizeof(double));
    if (!raw.empty()) std::memcpy(values.data(), raw.data(), raw.size());
  }

 private:
  template <typename V, typename Describe>
  static void read(const nlohmann::json& j, V& v, const Describe& describe) {
    if constexpr (json_fields_detail::is_vector<V>::value) {
      v.clear();
      for (const nlohmann::json& x : j) read(x, v.emplace_back(), describe);
    } else {
      field_reader r(j);
      describe(r, v);
    }
  }
  const nlohmann::json* in_;

  template <typename V, typename Describe>
  friend V from_json_by(const nlohmann::json& j, const Describe& describe);
};

// The sizes of any struct with members B, T, H, K, V (a problem, a bench shape), as
// fields of the object it is described in.
inline constexpr auto size_fields = [](auto& f, auto& x) {
  f("B", x.B);
  f("T", x.T);
  f("H", x.H);
  f("K", x.K);
  f("V", x.V);
};

// The struct as a JSON object, by its description.
template <typename V, typename Describe>
nlohmann::json to_json_by(const V& v, const Describe& describe) {
  return field_writer::write(v, describe);
}
// The struct a JSON object describes. Throws nlohmann's exceptions (naming the key) or
// std::runtime_error.
template <typename V, typename Describe>
V from_json_by(const nlohmann::json& j, const Describe& describe) {
  V v{};
  field_reader::read(j, v, describe);
  return v;
}

}  // namespace glabench
