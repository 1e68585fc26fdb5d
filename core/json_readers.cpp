// Position-aware reading of single JSON values for the trace reader: each
// reader checks the JSON type and, on a mismatch, throws an InputError naming
// the file, the byte offset and what was expected.
#include <fmt/core.h>

#include "core/errors.h"
#include "core/json_values.h"

namespace tracetwin::core::detail {

size_t JsonContext::offset() const {
  const char* at = nullptr;
  if (doc_.current_location().get(at) != simdjson::SUCCESS || at < json_.data()) {
    return json_.size();
  }
  return static_cast<size_t>(at - json_.data());
}

void JsonContext::fail(std::string_view expected, std::string_view detail) const {
  failAtOffset(offset(), expected, detail);
}

void JsonContext::failAt(const char* at, std::string_view expected, std::string_view detail) const {
  const bool inside = at != nullptr && at >= json_.data() && at <= json_.data() + json_.size();
  failAtOffset(inside ? static_cast<size_t>(at - json_.data()) : offset(), expected, detail);
}

void JsonContext::failAtOffset(size_t offset, std::string_view expected,
                               std::string_view detail) const {
  std::string where = fmt::format("{}: byte {}", source_, base_ + offset);
  if (node != kNoNode) where += fmt::format(" (node {})", node);
  if (detail.empty()) throw InputError(fmt::format("{}: expected {}", where, expected));
  throw InputError(fmt::format("{}: expected {}: {}", where, expected, detail));
}

int64_t readInt(od::value& v, const JsonContext& cx, std::string_view what) {
  int64_t i = 0;
  const simdjson::error_code err = v.get_int64().get(i);
  if (err == simdjson::SUCCESS) return i;
  // uint64 attributes (pointers, seeds) above 2^63 keep their bits.
  uint64_t u = 0;
  // (simdjson reports INCORRECT_TYPE, not NUMBER_OUT_OF_RANGE, for those).
  if (v.get_uint64().get(u) == simdjson::SUCCESS) {
    return static_cast<int64_t>(u);
  }
  cx.fail(fmt::format("an integer for {}", what), simdjson::error_message(err));
}

std::string_view readString(od::value& v, const JsonContext& cx, std::string_view what) {
  // The token runs to the next structural character: the closing quote, then
  // at most whitespace (stage 1 only accepts closed strings).
  std::string_view token = v.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t')) {
    token.remove_suffix(1);
  }
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') {
    cx.fail(fmt::format("a string for {}", what));
  }
  const char* raw = token.data();
  const char* end = raw + token.size() - 1;
  // Most strings are a few bytes: a loop; long ones (op schemas): memchr.
  bool escaped = false;
  if (token.size() < 40) {
    for (const char* p = raw + 1; p < end; ++p) escaped |= *p == '\\';
  } else {
    escaped = std::memchr(raw + 1, '\\', token.size() - 2) != nullptr;
  }
  if (!escaped) {
    // No escapes: a view into the input. raw_json_token() only peeks:
    // consume the string, or On-Demand later skips it with its depth-only
    // logic, which lets a stray ']' after it close an object (found by the
    // differential fuzzer).
    od::raw_json_string consumed;
    if (v.get_raw_json_string().get(consumed) != simdjson::SUCCESS) {
      cx.fail(fmt::format("a string for {}", what));
    }
    return std::string_view(raw + 1, static_cast<size_t>(end - raw - 1));
  }
  std::string_view unescaped;
  cx.check(v.get_string().get(unescaped), fmt::format("a valid string for {}", what));
  return unescaped;
}

od::array readArray(od::value& v, const JsonContext& cx, std::string_view what) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) cx.fail(fmt::format("an array for {}", what));
  return a;
}

od::object readObject(od::value& v, const JsonContext& cx, std::string_view what) {
  od::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) cx.fail(fmt::format("an object for {}", what));
  return o;
}

void readStringArray(od::value& v, const JsonContext& cx, std::string_view what,
                     std::vector<std::string_view>& out) {
  od::array a = readArray(v, cx, what);
  for (auto element : a) {
    cx.check(element.error(), what);
    od::value&& e = std::move(element).value_unsafe();  // in place, no copy
    out.push_back(readString(e, cx, what));
  }
}

}  // namespace tracetwin::core::detail
