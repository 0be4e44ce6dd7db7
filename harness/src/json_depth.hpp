// How deep the objects and arrays of a JSON text nest, without parsing it. Results files
// are read with nlohmann's parser, which nests without bound; what reads on (nlohmann's
// dump, a printer, the plot script) recurses, so a text nested deeper than glabench ever
// writes is refused first (kMaxJsonDepth). These only scan: strings are skipped, escapes
// too, and nothing else about the text's validity is checked.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace glabench {

// The deepest nesting of objects and arrays a JSON text glabench reads may have: results
// files nest 5 levels below their fields' own (a row's backend report, a check).
inline constexpr std::size_t kMaxJsonDepth = 64;

// Whether the objects and arrays of a text nest at most max_depth deep.
inline bool json_depth_within(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return false;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return true;
}

// Empty when the text nests at most max_depth deep; else where it goes deeper, as "byte
// N: context.x[0][0]: objects and arrays nest deeper than 64 levels" (keys as they are
// written, escapes not decoded; at most 8 levels and 40 bytes a key).
inline std::string json_nesting_error(std::string_view text, std::size_t max_depth) {
  if (json_depth_within(text, max_depth)) return {};
  struct level {
    bool object;
    std::string key;
    long index;
  };
  std::vector<level> path;
  bool in_string = false, escaped = false, key_next = false;
  std::string token;
  std::size_t at = 0;
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (key_next && !path.empty()) path.back().key = token.substr(0, 40);
        continue;
      }
      token += c;
      continue;
    }
    if (c == '"') {
      in_string = true;
      token.clear();
    } else if (c == '{' || c == '[') {
      path.push_back({c == '{', "", 0});
      key_next = c == '{';
      if (path.size() > max_depth) break;
    } else if ((c == '}' || c == ']') && !path.empty()) {
      path.pop_back();
      key_next = false;
    } else if (c == ':') {
      key_next = false;
    } else if (c == ',' && !path.empty()) {
      if (path.back().object)
        key_next = true;
      else
        ++path.back().index;
    }
  }
  std::string where;
  for (std::size_t i = 0; i + 1 < path.size() && i < 8; ++i) {  // the last is the refused one
    if (path[i].object) {
      if (!where.empty()) where += '.';
      where += path[i].key;
    } else {
      where += '[';
      where += std::to_string(path[i].index);
      where += ']';
    }
  }
  if (path.size() > 9) where += "…";
  std::string out = "byte ";
  out += std::to_string(at);
  out += ": ";
  if (!where.empty()) out += where + ": ";
  out += "objects and arrays nest deeper than " + std::to_string(max_depth) + " levels";
  return out;
}

}  // namespace glabench
