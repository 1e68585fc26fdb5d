// Position-aware reading of single JSON values for the trace reader: each
// reader checks the JSON type and, on a mismatch, throws an InputError naming
// the file, the byte offset and what was expected.
#include <fmt/core.h>

#include <cstdint>
#include <cstring>

#include "core/errors.h"
#include "core/json_values.h"

namespace tracetwin::core::detail {
namespace {

// True when [p, end) holds a backslash, tested 8 bytes at a time (readString
// runs ~30 times per node, mostly on names of 4-20 bytes). The input is padded (SIMDJSON_PADDING),
// so the last word may read up to 7 bytes past `end`; those bytes are masked off. The zero-byte
// test can flag a byte above a real match (a borrow), never a byte below one, so the mask keeps it
// exact. Little-endian: the first byte in memory is the low byte.
bool hasBackslashInPadded(const char* p, const char* end) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the mask assumes little-endian");
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  constexpr uint64_t kSlashes = kOnes * static_cast<unsigned char>('\\');
  for (; p < end; p += 8) {
    uint64_t word = 0;
    std::memcpy(&word, p, sizeof word);
    const uint64_t x = word ^ kSlashes;  // a zero byte where a backslash was
    uint64_t found = (x - kOnes) & ~x & kHigh;
    const auto left = static_cast<size_t>(end - p);
    if (left < 8) found &= (uint64_t{1} << (8 * left)) - 1;
    if (found != 0) return true;
  }
  return false;
}

}  // namespace

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

int64_t readNodeId(od::value& v, const JsonContext& cx, std::string_view what) {
  int64_t i = 0;
  const simdjson::error_code err = v.get_int64().get(i);
  if (err == simdjson::SUCCESS && i >= 0) return i;
  uint64_t u = 0;
  const std::string detail = err == simdjson::SUCCESS ? fmt::format("{} is negative", i)
                             : v.get_uint64().get(u) == simdjson::SUCCESS
                                 ? fmt::format("{} is over 2^63-1", u)
                                 : std::string(simdjson::error_message(err));
  cx.fail(fmt::format("an integer for {} (0 to 9223372036854775807)", what), detail);
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
  // Most strings are a few bytes: a word at a time; long ones (op schemas): memchr.
  const bool escaped = token.size() < 40 ? hasBackslashInPadded(raw + 1, end)
                                         : std::memchr(raw + 1, '\\', token.size() - 2) != nullptr;
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
