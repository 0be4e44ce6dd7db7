// Text that glabench did not write itself — a plugin's name, version and messages, file
// and fixture names, strings read from input files, error messages quoting any of those —
// made safe to print and to store. Such text may hold bytes that are not UTF-8 (which
// nlohmann::json refuses to write), newlines (which could forge output lines) and
// terminal control sequences (ESC [ ... rewrites what the console shows).
//
// One escaping serves the console and the JSON, so a results file holds exactly the text
// that was printed:
//   a byte that is not part of valid UTF-8       \xNN   (e.g. \xff)
//   tab, newline, carriage return                 \t \n \r
//   any other C0 control character, and DEL       \xNN   (ESC is \x1b)
//   C1 controls U+0080–U+009F, the line and paragraph separators U+2028/U+2029, and the
//   bidirectional controls U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069
//                                                 \uNNNN
// Everything else — printable ASCII, printable UTF-8 such as "≥" or "×", and the
// backslash itself — is kept as it is. The result is valid UTF-8 without control
// characters, and escaping it again changes nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace glabench {

// For the console (and markdown): the escaping above.
std::string console_safe(std::string_view text);

// For a JSON string: the same escaping, so the string is valid UTF-8 and dump() cannot
// throw.
std::string json_safe(std::string_view text);

// A copy of `j` with every string value and every object key passed through json_safe.
nlohmann::json json_safe_tree(const nlohmann::json& j);

// Whether json_safe_tree(j) would equal `j` (no copy needed: results files can hold
// hundreds of thousands of rows).
bool json_is_safe(const nlohmann::json& j);

}  // namespace glabench
