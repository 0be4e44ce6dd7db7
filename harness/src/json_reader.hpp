// A strict JSON reader (RFC 8259) that feeds a SAX handler of nlohmann::json's
// interface, for results files of hundreds of thousands of rows: several times faster
// than nlohmann's own lexer, which copies every character of every token into a buffer
// one at a time. It accepts exactly what nlohmann::json::sax_parse accepts, and hands the
// handler the same events with the same values:
//   - an optional UTF-8 byte order mark, then one value, with whitespace (space, tab,
//     newline, carriage return) around tokens and nothing after the value;
//   - strings of valid UTF-8 without raw control characters (0x00–0x1f), with the
//     escapes \" \\ \/ \b \f \n \r \t and \uXXXX (a surrogate pair for one code point,
//     never a lone surrogate), handed over as UTF-8;
//   - numbers as the grammar has them (no leading zeros, "+", ".5", "1." or "1e"): an
//     integer token as a signed (with "-") or unsigned 64-bit integer, or as a double when
//     it does not fit; other tokens as the correctly rounded double, refused when it is
//     infinite (nlohmann's "number overflow");
//   - start_object and start_array with size -1 (unknown), as nlohmann's parser calls them.
// Nesting is kept on a heap stack, not in recursion, so depth costs memory, not stack;
// it is bounded all the same (kMaxJsonDepth): what glabench writes nests a few levels,
// and deeper text fails like any malformed text, so that no later recursive step (nlohmann's
// dump, a printer) meets it. json_depth_within checks a text for the same bound without
// parsing it.
// A NUL byte after the value ends the text, as for nlohmann (which reads C strings too).
// The handler's number_float gets an empty string for the token text. A malformed text
// throws json_syntax_error (the byte offset and what was expected); the handler's
// parse_error is never called. A handler that returns false stops the parse (as with
// nlohmann, the result is then false).
#pragma once

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace glabench {

class json_syntax_error : public std::runtime_error {
 public:
  json_syntax_error(size_t offset, const std::string& what)
      : std::runtime_error("byte " + std::to_string(offset) + ": " + what), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

// The deepest nesting of objects and arrays a JSON text glabench reads may have: results
// files nest 5 levels below their fields' own (a row's backend report, a check).
inline constexpr std::size_t kMaxJsonDepth = 64;

// Whether the objects and arrays of a text nest at most max_depth deep (strings skipped,
// escapes too); says nothing else about the text's validity.
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

namespace json_reader_detail {

// What each byte is inside a string: 0 an ordinary byte (kept as it is), 1 the end or
// an escape, 2 a control character, 3 the first byte of a multi-byte UTF-8 sequence or
// a byte that cannot be one.
inline constexpr auto kStringByte = [] {
  struct table {
    unsigned char kind[256] = {};
  } t;
  for (int c = 0; c < 0x20; ++c) t.kind[c] = 2;
  t.kind[static_cast<unsigned char>('"')] = 1;
  t.kind[static_cast<unsigned char>('\\')] = 1;
  for (int c = 0x80; c < 0x100; ++c) t.kind[c] = 3;
  return t;
}();

}  // namespace json_reader_detail

template <typename Sax>
class json_reader {
 public:
  json_reader(std::string_view text, Sax& sax)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), sax_(&sax) {}

  // Reads the whole text: true, or false when the handler stopped it.
  bool parse() {
    if (end_ - p_ >= 1 && static_cast<unsigned char>(*p_) == 0xef) {
      if (end_ - p_ < 3 || static_cast<unsigned char>(p_[1]) != 0xbb ||
          static_cast<unsigned char>(p_[2]) != 0xbf)
        fail("an incomplete UTF-8 byte order mark");
      p_ += 3;
    }
    // The open containers, innermost last: '{' or '['.
    std::vector<char> open;
    skip_space();
    for (;;) {
      // A value is expected here.
      if (p_ == end_) fail("a value was expected, found the end of the text");
      switch (*p_) {
        case '{':
          ++p_;
          if (!sax_->start_object(static_cast<std::size_t>(-1))) return false;
          skip_space();
          if (p_ != end_ && *p_ == '}') {
            ++p_;
            if (!sax_->end_object()) return false;
            break;  // an empty object is a complete value
          }
          push(open, '{');
          if (!read_key()) return false;
          continue;  // its first value
        case '[':
          ++p_;
          if (!sax_->start_array(static_cast<std::size_t>(-1))) return false;
          skip_space();
          if (p_ != end_ && *p_ == ']') {
            ++p_;
            if (!sax_->end_array()) return false;
            break;
          }
          push(open, '[');
          continue;  // its first element
        case '"':
          read_string();
          if (!sax_->string(buffer_)) return false;
          break;
        case 't':
          literal("true");
          if (!sax_->boolean(true)) return false;
          break;
        case 'f':
          literal("false");
          if (!sax_->boolean(false)) return false;
          break;
        case 'n':
          literal("null");
          if (!sax_->null()) return false;
          break;
        default:
          if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) {
            if (!read_number()) return false;
            break;
          }
          fail("a value was expected");
      }
      // A value is complete: what follows it in its container, or the end.
      for (;;) {
        skip_space();
        if (open.empty()) {
          // (a NUL byte ends the text for nlohmann, which reads C strings too)
          if (p_ != end_ && *p_ != '\0') fail("the end of the text was expected after the value");
          return true;
        }
        if (p_ == end_) fail("the text ends inside an object or array");
        const char c = *p_++;
        if (open.back() == '{') {
          if (c == ',') {
            skip_space();
            if (!read_key()) return false;
            break;  // the next value
          }
          if (c != '}') fail_before("',' or '}' was expected after an object's value");
          open.pop_back();
          if (!sax_->end_object()) return false;
        } else {
          if (c == ',') {
            skip_space();
            break;  // the next element
          }
          if (c != ']') fail_before("',' or ']' was expected after an array's element");
          open.pop_back();
          if (!sax_->end_array()) return false;
        }
      }
    }
  }

 private:
  // Opens a container, within kMaxJsonDepth.
  void push(std::vector<char>& open, char c) const {
    if (open.size() >= kMaxJsonDepth)
      fail(where() + "objects and arrays nest deeper than " + std::to_string(kMaxJsonDepth) +
           " levels");
    open.push_back(c);
  }
  // The field the text has reached ("context.x[0]: "), its first levels: read again from
  // the start, since only a refused text needs it. Keys are shown as they are written
  // (escapes not decoded), at most 8 levels and 40 bytes a key.
  std::string where() const {
    struct level {
      bool object;
      std::string key;
      long index;
    };
    std::vector<level> path;
    bool in_string = false, escaped = false, key_next = false;
    std::string token;
    for (const char* q = begin_; q < p_; ++q) {
      const char c = *q;
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
      } else if (c == '{') {
        path.push_back({true, "", 0});
        key_next = true;
      } else if (c == '[') {
        path.push_back({false, "", 0});
        key_next = false;
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
    std::string out;
    for (std::size_t i = 0; i + 1 < path.size() && i < 8;
         ++i) {  // the last level is the refused one
      if (path[i].object)
        out += (out.empty() ? "" : ".") + path[i].key;
      else
        out += "[" + std::to_string(path[i].index) + "]";
    }
    if (path.size() > 9) out += "…";
    return out.empty() ? std::string() : out + ": ";
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw json_syntax_error(static_cast<size_t>(p_ - begin_), what);
  }
  // For a byte already consumed.
  [[noreturn]] void fail_before(const std::string& what) {
    --p_;
    fail(what);
  }

  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // `"key" :` then whitespace, at the start of an object's member.
  bool read_key() {
    if (p_ == end_ || *p_ != '"') fail("a string key was expected");
    read_string();
    if (!sax_->key(buffer_)) return false;
    skip_space();
    if (p_ == end_ || *p_ != ':') fail("':' was expected after an object's key");
    ++p_;
    skip_space();
    return true;
  }

  void literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      fail("a value was expected (true, false or null?)");
    p_ += word.size();
  }

  // The string at p_ (its opening quote) into buffer_, decoded.
  void read_string() {
    using json_reader_detail::kStringByte;
    buffer_.clear();
    ++p_;
    for (;;) {
      const char* run = p_;
      while (p_ != end_ && kStringByte.kind[static_cast<unsigned char>(*p_)] == 0) ++p_;
      buffer_.append(run, p_);
      if (p_ == end_) fail("the text ends inside a string");
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return;
      }
      if (c == '\\') {
        escape();
      } else if (c < 0x20) {
        fail("a control character must be escaped inside a string");
      } else {
        utf8_sequence();
      }
    }
  }

  // A UTF-8 sequence of two to four bytes at p_, checked (RFC 3629) and kept.
  void utf8_sequence() {
    const unsigned char b0 = static_cast<unsigned char>(*p_);
    unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
    int n;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      n = 2;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      n = 3;
      if (b0 == 0xe0) lo = 0xa0;
      if (b0 == 0xed) hi = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      n = 4;
      if (b0 == 0xf0) lo = 0x90;
      if (b0 == 0xf4) hi = 0x8f;
    } else {
      fail("invalid UTF-8 in a string");
    }
    if (end_ - p_ < n) fail("invalid UTF-8 in a string");
    for (int i = 1; i < n; ++i) {
      const unsigned char b = static_cast<unsigned char>(p_[i]);
      if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) {
        p_ += i;
        fail("invalid UTF-8 in a string");
      }
    }
    buffer_.append(p_, p_ + n);
    p_ += n;
  }

  // The escape at p_ (its backslash), decoded into buffer_.
  void escape() {
    ++p_;
    if (p_ == end_) fail("the text ends inside a string");
    const char c = *p_++;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        buffer_ += c;
        return;
      case 'b':
        buffer_ += '\b';
        return;
      case 'f':
        buffer_ += '\f';
        return;
      case 'n':
        buffer_ += '\n';
        return;
      case 'r':
        buffer_ += '\r';
        return;
      case 't':
        buffer_ += '\t';
        return;
      case 'u':
        break;
      default:
        fail_before("an invalid escape in a string");
    }
    char32_t cp = hex4();
    if (cp >= 0xdc00 && cp <= 0xdfff)
      fail("a low surrogate (\\uDC00-\\uDFFF) without a high one before it");
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
        fail("a high surrogate (\\uD800-\\uDBFF) must be followed by a low one");
      p_ += 2;
      const char32_t low = hex4();
      if (low < 0xdc00 || low > 0xdfff)
        fail("a high surrogate (\\uD800-\\uDBFF) must be followed by a low one");
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    if (cp < 0x80) {
      buffer_ += static_cast<char>(cp);
    } else if (cp < 0x800) {
      buffer_ += static_cast<char>(0xc0 | (cp >> 6));
      buffer_ += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      buffer_ += static_cast<char>(0xe0 | (cp >> 12));
      buffer_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      buffer_ += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      buffer_ += static_cast<char>(0xf0 | (cp >> 18));
      buffer_ += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      buffer_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      buffer_ += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  char32_t hex4() {
    if (end_ - p_ < 4) fail("\\u must be followed by four hexadecimal digits");
    char32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_;
      int d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        fail("\\u must be followed by four hexadecimal digits");
      cp = cp * 16 + static_cast<char32_t>(d);
      ++p_;
    }
    return cp;
  }

  // The number at p_ ('-' or a digit).
  bool read_number() {
    auto digit = [&] { return p_ != end_ && *p_ >= '0' && *p_ <= '9'; };
    const char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (!digit()) fail("a digit was expected in a number");
    if (*p_ == '0')
      ++p_;  // a leading zero stands alone: what follows "0" is not part of the number
    else
      while (digit()) ++p_;
    bool integer = true;
    if (p_ != end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (!digit()) fail("a digit was expected after a decimal point");
      while (digit()) ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digit()) fail("a digit was expected in an exponent");
      while (digit()) ++p_;
    }
    if (integer) {
      if (negative) {
        int64_t v = 0;
        if (const auto r = std::from_chars(start, p_, v); r.ec == std::errc() && r.ptr == p_)
          return sax_->number_integer(v);
      } else {
        uint64_t v = 0;
        if (const auto r = std::from_chars(start, p_, v); r.ec == std::errc() && r.ptr == p_)
          return sax_->number_unsigned(v);
      }
      // too large for 64 bits: a double, as nlohmann reads it
    }
    double d = 0;
    const auto r = std::from_chars(start, p_, d);
    if (r.ec != std::errc() || r.ptr != p_) {
      // Out of range (overflow, or underflow, which strtod rounds to zero or a
      // subnormal): strtod decides, as in nlohmann.
      const std::string token(start, p_);
      d = std::strtod(token.c_str(), nullptr);
    }
    if (!std::isfinite(d)) {
      const std::string token(start, p_);
      p_ = start;
      fail("number overflow parsing '" + token + "'");
    }
    return sax_->number_float(d, empty_);
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  Sax* sax_;
  std::string buffer_;  // the string or key being read (handed to the handler, which may take it)
  const std::string empty_;
};

// Reads `text` into `sax` (nlohmann's SAX interface): true, or false when the handler
// stopped. Throws json_syntax_error on malformed JSON.
template <typename Sax>
bool json_sax_read(std::string_view text, Sax& sax) {
  return json_reader<Sax>(text, sax).parse();
}

}  // namespace glabench
