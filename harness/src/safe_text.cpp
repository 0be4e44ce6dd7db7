#include "safe_text.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace glabench {
namespace {

// The length of the valid UTF-8 sequence at the start of `s` and its code point, or 0
// when the first byte does not begin one (stray continuation byte, overlong form,
// surrogate, beyond U+10FFFF, truncated sequence).
size_t utf8_sequence(std::string_view s, char32_t& cp) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t n;
  char32_t min;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2, cp = b0 & 0x1f, min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3, cp = b0 & 0x0f, min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// Code points that are valid UTF-8 but steer a terminal or reorder the text shown.
bool is_invisible_control(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// Printable ASCII only: the common case, kept as it is without decoding.
bool plain(std::string_view text) {
  for (const char c : text)
    if (c < 0x20 || c > 0x7e) return false;  // bytes >= 0x80 fail one test, signed or not
  return true;
}

std::string escape(std::string_view text) {
  if (plain(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    char32_t cp = 0;
    const size_t n = utf8_sequence(text.substr(i), cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      i += 1;
      continue;
    }
    if (cp == '\t')
      out += "\\t";
    else if (cp == '\n')
      out += "\\n";
    else if (cp == '\r')
      out += "\\r";
    else if (cp < 0x20 || cp == 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    else if (is_invisible_control(cp))
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    else
      out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

std::string console_safe(std::string_view text) {
  return escape(text);
}

std::string json_safe(std::string_view text) {
  return escape(text);
}

namespace {

bool changes(const std::string& s) {
  return !plain(s) && escape(s) != s;
}

nlohmann::json escaped_copy(const nlohmann::json& j) {
  if (j.is_string()) return json_safe(j.get_ref<const std::string&>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : j) out.push_back(escaped_copy(item));
    return out;
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : j.items()) out[json_safe(key)] = escaped_copy(value);
    return out;
  }
  return j;
}

}  // namespace

bool json_is_safe(const nlohmann::json& j) {
  if (j.is_string()) return !changes(j.get_ref<const std::string&>());
  if (j.is_array()) {
    for (const auto& item : j)
      if (!json_is_safe(item)) return false;
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (changes(it.key()) || !json_is_safe(it.value())) return false;
  }
  return true;
}

nlohmann::json json_safe_tree(const nlohmann::json& j) {
  return escaped_copy(j);
}

}  // namespace glabench
