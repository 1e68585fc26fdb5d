// InternedText: an immutable string kept once per process, held by pointer.
// For the Graph's repeated texts: a trace has a few dozen distinct value types
// ("Int", "Tensor(float)", "GenericList[Tensor(float),Int]"), devices, node
// names and a few hundred op schemas, repeated over ~100k values and ~30k
// nodes. As a std::string each was 32 bytes, and one allocation (plus a copy)
// whenever over 15 bytes: ~57k of the 280k allocations of reading a 27 MB
// trace. Interned, each is a pointer (8 bytes), copies are free and equality
// is a pointer compare.
//
// Reads like a const std::string (it converts to one, and has its usual const
// members); assigning a string interns it. The table only grows: its texts
// live until the process ends, which is what makes the pointers safe to copy
// between Graphs and threads. What a process interns is bounded by the
// distinct texts of the traces it reads (a few KB each).
#pragma once

#include <fmt/format.h>  // formatter<string_view>::format is defined here

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

namespace tracetwin::core {

class InternedText {
 public:
  InternedText() = default;  // "": no pointer (a Value makes two; no table visit)
  InternedText(std::string_view text) : p_(intern(text)) {}  // NOLINT: reads as a string
  InternedText(const std::string& text) : p_(intern(text)) {}  // NOLINT
  InternedText(const char* text) : p_(intern(text)) {}  // NOLINT

  // The one copy of `text` in this process (thread-safe); nullptr for "".
  static const std::string* intern(std::string_view text);

  const std::string& str() const { return p_ != nullptr ? *p_ : emptyText(); }
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
  std::string_view view() const {
    return p_ != nullptr ? std::string_view(*p_) : std::string_view();
  }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)

  const char* c_str() const { return str().c_str(); }
  const char* data() const { return str().data(); }
  size_t size() const { return p_ != nullptr ? p_->size() : 0; }
  size_t length() const { return size(); }
  bool empty() const { return p_ == nullptr; }
  char operator[](size_t i) const { return str()[i]; }
  char front() const { return str().front(); }
  char back() const { return str().back(); }
  std::string::const_iterator begin() const { return str().begin(); }
  std::string::const_iterator end() const { return str().end(); }
  template <typename... Args>
  size_t find(Args&&... args) const {
    return str().find(std::forward<Args>(args)...);
  }
  template <typename... Args>
  size_t rfind(Args&&... args) const {
    return str().rfind(std::forward<Args>(args)...);
  }
  template <typename... Args>
  int compare(Args&&... args) const {
    return str().compare(std::forward<Args>(args)...);
  }
  std::string substr(size_t pos = 0, size_t n = std::string::npos) const {
    return str().substr(pos, n);
  }

  void clear() { p_ = nullptr; }
  // Interns the longer text (for builders of test and sweep graphs; the
  // reader never appends).
  InternedText& operator+=(std::string_view more) {
    p_ = intern(str() + std::string(more));
    return *this;
  }
  void assign(const char* text, size_t n) { p_ = intern(std::string_view(text, n)); }

  // Interned: equal texts are the same pointer ("" is null).
  friend bool operator==(const InternedText& a, const InternedText& b) { return a.p_ == b.p_; }
  friend bool operator!=(const InternedText& a, const InternedText& b) { return a.p_ != b.p_; }
  // Ordered by text (maps and sorts keyed by it order as they did on strings).
  friend bool operator<(const InternedText& a, const InternedText& b) { return a.str() < b.str(); }
  // With plain texts, both ways. Hidden friends (found only through an
  // InternedText argument), so that `string_view == "x"` elsewhere stays
  // unambiguous; explicit overloads, so that `== "Int"` is not ambiguous.
#define TT_INTERNED_COMPARE(T)                                                              \
  friend bool operator==(const InternedText& a, T b) { return a.view() == std::string_view(b); } \
  friend bool operator==(T a, const InternedText& b) { return b.view() == std::string_view(a); } \
  friend bool operator!=(const InternedText& a, T b) { return !(a == b); }                      \
  friend bool operator!=(T a, const InternedText& b) { return !(b == a); }
  TT_INTERNED_COMPARE(std::string_view)
  TT_INTERNED_COMPARE(const std::string&)
  TT_INTERNED_COMPARE(const char*)
#undef TT_INTERNED_COMPARE

  friend std::string operator+(const InternedText& a, std::string_view b) {
    std::string out = a.str();
    out.append(b.data(), b.size());
    return out;
  }
  friend std::string operator+(const InternedText& a, const std::string& b) { return a.str() + b; }
  friend std::string operator+(const InternedText& a, const char* b) { return a.str() + b; }
  friend std::string operator+(const std::string& a, const InternedText& b) { return a + b.str(); }
  friend std::string operator+(const char* a, const InternedText& b) { return a + b.str(); }
  friend std::string operator+(char a, const InternedText& b) { return a + b.str(); }
  friend std::string operator+(std::string&& a, const InternedText& b) {
    a += b.str();
    return std::move(a);
  }

 private:
  static const std::string& emptyText();
  const std::string* p_ = nullptr;
};

std::ostream& operator<<(std::ostream& os, const InternedText& text);

}  // namespace tracetwin::core

template <>
struct std::hash<tracetwin::core::InternedText> {
  size_t operator()(const tracetwin::core::InternedText& t) const {
    return std::hash<std::string_view>()(t.view());
  }
};

template <>
struct fmt::formatter<tracetwin::core::InternedText> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(const tracetwin::core::InternedText& t, FormatContext& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(t.data(), t.size()), ctx);
  }
};
