#include "core/chakra/python_literal.h"

#include <fmt/core.h>

#include <cctype>
#include <cstdint>

#include "core/errors.h"

namespace tracetwin::core::chakra {
namespace {

// Lists nest three deep in real traces; the bound keeps a hostile file from
// exhausting the stack (as the JSON reader's kMaxNesting).
constexpr int kMaxNesting = 64;

class Converter {
 public:
  Converter(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  std::string run() {
    skipSpace();
    if (i_ == s_.size()) return "[]";
    value(0);
    skipSpace();
    if (i_ != s_.size()) fail("the end of the text");
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(std::string_view expected) const {
    const std::string_view near = s_.substr(i_, 24);
    throw InputError(fmt::format("{}: byte {}: expected {}{}", what_, i_, expected,
                                 i_ < s_.size() ? fmt::format(", found \"{}\"", near) : ""));
  }

  void skipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }

  bool startsWith(std::string_view word) const { return s_.substr(i_, word.size()) == word; }

  void value(int depth) {
    if (depth > kMaxNesting) fail(fmt::format("lists nested at most {} deep", kMaxNesting));
    if (i_ >= s_.size()) fail("a value");
    const char c = s_[i_];
    if (c == '[' || c == '(') return list(c == '[' ? ']' : ')', depth);
    if (c == '\'' || c == '"') return string(c);
    if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) return number();
    return word();
  }

  void list(char close, int depth) {
    ++i_;
    out_ += '[';
    bool first = true;
    for (;;) {
      skipSpace();
      if (i_ < s_.size() && s_[i_] == close) {
        ++i_;
        break;
      }
      if (!first) {
        if (i_ >= s_.size() || s_[i_] != ',') fail(fmt::format("',' or '{}'", close));
        ++i_;
        skipSpace();
        // Python allows a trailing comma: "(1,)".
        if (i_ < s_.size() && s_[i_] == close) {
          ++i_;
          break;
        }
        out_ += ',';
      }
      value(depth + 1);
      first = false;
    }
    out_ += ']';
  }

  static void appendCodeUnit(std::string& out, uint32_t unit) {
    out += fmt::format("\\u{:04x}", unit);
  }

  // A code point as JSON \u escapes (a surrogate pair above the BMP).
  static void appendCodePoint(std::string& out, uint32_t cp) {
    if (cp < 0x10000) return appendCodeUnit(out, cp);
    cp -= 0x10000;
    appendCodeUnit(out, 0xd800 + (cp >> 10));
    appendCodeUnit(out, 0xdc00 + (cp & 0x3ff));
  }

  uint32_t hexDigits(size_t n) {
    if (i_ + n > s_.size()) fail(fmt::format("{} hex digits", n));
    uint32_t v = 0;
    for (size_t k = 0; k < n; ++k) {
      const char h = s_[i_ + k];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= uint32_t(h - 'A' + 10);
      else
        fail(fmt::format("{} hex digits", n));
    }
    i_ += n;
    return v;
  }

  void string(char quote) {
    ++i_;
    out_ += '"';
    for (;;) {
      if (i_ >= s_.size()) fail(fmt::format("the closing {} of a string", quote));
      const char c = s_[i_++];
      if (c == quote) break;
      if (c == '"') {
        out_ += "\\\"";
      } else if (static_cast<unsigned char>(c) < 0x20) {
        appendCodeUnit(out_, static_cast<unsigned char>(c));
      } else if (c != '\\') {
        out_ += c;
      } else {
        escape();
      }
    }
    out_ += '"';
  }

  void escape() {
    if (i_ >= s_.size()) fail("an escape after '\\'");
    const char e = s_[i_++];
    switch (e) {
      case '\\':
        out_ += "\\\\";
        break;
      case '\'':
        out_ += '\'';
        break;
      case '"':
        out_ += "\\\"";
        break;
      case '/':
        out_ += '/';
        break;
      case 'n':
        out_ += "\\n";
        break;
      case 'r':
        out_ += "\\r";
        break;
      case 't':
        out_ += "\\t";
        break;
      case 'b':
        out_ += "\\b";
        break;
      case 'f':
        out_ += "\\f";
        break;
      case 'v':
        appendCodeUnit(out_, 0x0b);
        break;
      case 'a':
        appendCodeUnit(out_, 0x07);
        break;
      case 'x':
        appendCodePoint(out_, hexDigits(2));
        break;
      case 'u':
        appendCodeUnit(out_, hexDigits(4));
        break;
      case 'U':
        appendCodePoint(out_, hexDigits(8));
        break;
      default:
        if (e >= '0' && e <= '7') {  // octal, up to three digits
          uint32_t v = uint32_t(e - '0');
          for (int k = 0; k < 2 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++k)
            v = v * 8 + uint32_t(s_[i_++] - '0');
          appendCodePoint(out_, v);
        } else {
          --i_;
          fail("a known escape (\\\\ \\' \\\" \\n \\t \\xHH \\uHHHH ...)");
        }
    }
  }

  void number() {
    const size_t start = i_;
    if (s_[i_] == '+' || s_[i_] == '-') ++i_;
    // -inf / +nan: the ET observer's quoted spellings.
    for (std::string_view special : {"inf", "nan", "Infinity", "NaN"}) {
      if (startsWith(special)) {
        i_ += special.size();
        out_ += '"';
        if (s_[start] == '-') out_ += '-';
        out_ += special == "Infinity" ? "inf" : special == "NaN" ? "nan" : std::string(special);
        out_ += '"';
        return;
      }
    }
    const size_t digits = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    bool any = i_ > digits;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      const size_t frac = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      any = any || i_ > frac;
    }
    if (!any) {
      i_ = start;
      fail("a number");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      const size_t exp = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == exp) fail("exponent digits");
    }
    // JSON wants no '+' sign, a digit before '.' and one after it.
    std::string_view tok = s_.substr(start, i_ - start);
    if (tok.front() == '+') tok.remove_prefix(1);
    std::string norm;
    for (size_t k = 0; k < tok.size(); ++k) {
      const bool dot = tok[k] == '.';
      if (dot && (k == 0 || tok[k - 1] < '0' || tok[k - 1] > '9')) norm += '0';
      norm += tok[k];
      if (dot && (k + 1 == tok.size() || tok[k + 1] < '0' || tok[k + 1] > '9')) norm += '0';
    }
    out_ += norm;
  }

  void word() {
    struct Word {
      std::string_view python, json;
    };
    static constexpr Word kWords[] = {
        {"True", "true"},        {"False", "false"}, {"None", "null"},   {"true", "true"},
        {"false", "false"},      {"null", "null"},   {"inf", "\"inf\""}, {"nan", "\"nan\""},
        {"Infinity", "\"inf\""}, {"NaN", "\"nan\""},
    };
    for (const Word& w : kWords) {
      if (!startsWith(w.python)) continue;
      const size_t end = i_ + w.python.size();
      const bool boundary = end == s_.size() ||
                            !(std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_');
      if (!boundary) continue;
      i_ = end;
      out_ += w.json;
      return;
    }
    fail("a list, tuple, string, number, True, False or None");
  }

  std::string_view s_;
  const std::string& what_;
  size_t i_ = 0;
  std::string out_;
};

}  // namespace

std::string pythonLiteralToJson(std::string_view text, const std::string& what) {
  return Converter(text, what).run();
}

}  // namespace tracetwin::core::chakra
