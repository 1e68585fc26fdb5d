#include "predictors/specs/yaml_strict.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "core/errors.h"
#include "core/text_file.h"
#include "core/utf8.h"

namespace tracetwin::predictors::yaml {

void failAt(const std::string& source, const YAML::Node& at, const std::string& message) {
  YAML::Mark mark = at.Mark();
  if (mark.is_null()) throw InputError(fmt::format("{}: {}", source, message));
  throw InputError(fmt::format("{}:{}:{}: {}", source, mark.line + 1, mark.column + 1, message));
}

YAML::Node parse(const std::string& text, const std::string& source) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) failAt(source, root, "expected a mapping at the top level");
    return root;
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}:{}: YAML syntax error: {}", source, e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
}

std::string readTextFile(const std::string& path, const std::string& what) {
  return core::readTextFile(path, what);
}

YAML::Node parseFile(const std::string& path) {
  return parse(readTextFile(path, "a YAML file"), path);
}

MapReader::MapReader(const YAML::Node& node, std::string source, std::string what)
    : node_(node), source_(std::move(source)), what_(std::move(what)) {
  if (!node_.IsMap()) fail(node_, fmt::format("expected '{}' to be a mapping", what_));
}

void MapReader::fail(const YAML::Node& at, const std::string& message) const {
  failAt(source_, at, message);
}

void MapReader::checkKeys(std::initializer_list<const char*> required,
                          std::initializer_list<const char*> optional) const {
  std::string known;
  for (const char* k : required) known += fmt::format("{}{}", known.empty() ? "" : ", ", k);
  for (const char* k : optional) known += fmt::format("{}{}", known.empty() ? "" : ", ", k);
  std::set<std::string> seen;
  for (const auto& kv : node_) {
    // YAML allows any node as a key ("? [a, b]"); a spec's keys are names.
    if (!kv.first.IsScalar()) fail(kv.first, fmt::format("keys in {} must be plain names", what_));
    const std::string key = kv.first.as<std::string>();
    // yaml-cpp keeps both entries of a repeated key and reads the first.
    if (!seen.insert(key).second)
      fail(kv.first, fmt::format("key '{}' repeated in {}", key, what_));
    bool ok = false;
    for (const char* k : required) ok = ok || key == k;
    for (const char* k : optional) ok = ok || key == k;
    if (!ok) fail(kv.first, fmt::format("unknown key '{}' in {} (known: {})", key, what_, known));
  }
  for (const char* k : required) {
    if (!has(k)) fail(node_, fmt::format("missing key '{}' in {}", k, what_));
  }
}

bool MapReader::has(const char* key) const { return static_cast<bool>(node_[key]); }

YAML::Node MapReader::get(const char* key) const {
  YAML::Node v = node_[key];
  if (!v) fail(node_, fmt::format("missing key '{}' in {}", key, what_));
  return v;
}

namespace {
// Names and source lines are one line of UTF-8 text: YAML reads a quoted
// "a\n\nb" as a name, and its writer folds the newlines of such a name
// differently on the way back (the device-spec fuzzer's third find); an
// ill-formed byte sequence came back as a control character (core/utf8.h).
bool oneLine(const std::string& text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return false;
  }
  return core::isValidUtf8(text);
}
}  // namespace

std::string MapReader::str(const char* key) const {
  YAML::Node v = get(key);
  if (!v.IsScalar()) fail(v, fmt::format("'{}' in {} must be a string", key, what_));
  std::string text = v.as<std::string>();
  if (!oneLine(text)) fail(v, fmt::format("'{}' in {} must be one line of UTF-8 text", key, what_));
  if (text.empty()) fail(v, fmt::format("'{}' in {} must not be empty", key, what_));
  return text;
}

namespace {
double number(const MapReader& r, const YAML::Node& v, const char* key) {
  if (!v.IsScalar()) r.fail(v, fmt::format("'{}' must be a number", key));
  if (v.Tag() == "!")  // quoted: a string, whatever it spells
    r.fail(v, fmt::format("'{}' must be a number, got the string \"{}\"", key, v.Scalar()));
  try {
    double d = v.as<double>();
    if (!std::isfinite(d)) r.fail(v, fmt::format("'{}' must be a finite number", key));
    return d;
  } catch (const YAML::Exception&) {
    r.fail(v, fmt::format("'{}' must be a number, got '{}'", key, v.Scalar()));
  }
}
}  // namespace

double MapReader::positive(const char* key) const {
  YAML::Node v = get(key);
  double d = number(*this, v, key);
  if (d <= 0) fail(v, fmt::format("'{}' must be > 0, got {}", key, d));
  return d;
}

double MapReader::within(const char* key, double lo, double hi) const {
  YAML::Node v = get(key);
  double d = number(*this, v, key);
  if (!(d >= lo && d <= hi))
    fail(v, fmt::format("'{}' must be from {:g} to {:g}, got {}", key, lo, hi, d));
  return d;
}

double MapReader::nonNegative(const char* key) const {
  YAML::Node v = get(key);
  double d = number(*this, v, key);
  if (d < 0) fail(v, fmt::format("'{}' must be >= 0, got {}", key, d));
  return d;
}

namespace {
// Counts and byte sizes past this are typing errors, and past 2^63 the cast
// to int64_t is undefined (the device-spec fuzzer's second find).
constexpr double kLargestInteger = 4611686018427387904.0;  // 2^62
}  // namespace

int64_t MapReader::positiveInt(const char* key) const {
  YAML::Node v = get(key);
  double d = number(*this, v, key);
  if (d <= 0 || std::floor(d) != d || d > kLargestInteger)
    fail(v, fmt::format("'{}' must be a positive integer (at most 2^62)", key));
  return static_cast<int64_t>(d);
}

int64_t MapReader::intFrom(const char* key, int64_t lo, int64_t hi) const {
  YAML::Node v = get(key);
  double d = number(*this, v, key);
  if (std::floor(d) != d || d < double(lo) || d > double(hi))
    fail(v, fmt::format("'{}' must be an integer from {} to {}, got {}", key, lo, hi, v.Scalar()));
  return static_cast<int64_t>(d);
}

int64_t MapReader::positiveBytes(const char* key, double unit_bytes) const {
  const double given = positive(key);
  const double bytes = given * unit_bytes;
  if (bytes > kLargestInteger)
    fail(get(key), fmt::format("'{}' must be at most {:g} (2^62 bytes), got {:g}", key,
                               kLargestInteger / unit_bytes, given));
  // Rounded, not truncated: 2.007018905 GB is 2,007,018,904.9999998 bytes
  // in double, and truncating lost a byte on every write and read back.
  const int64_t rounded = std::llround(bytes);
  // Positive but under half a byte would round to 0, which callers read as "not set".
  if (rounded < 1)
    fail(get(key), fmt::format("'{}' must be at least one byte, got {:g} bytes", key, bytes));
  return rounded;
}

std::vector<std::string> MapReader::strList(const char* key) const {
  YAML::Node v = get(key);
  if (!v.IsSequence()) fail(v, fmt::format("'{}' must be a list of strings", key));
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.IsScalar()) fail(e, fmt::format("'{}' entries must be strings", key));
    out.push_back(e.as<std::string>());
    if (!oneLine(out.back()))
      fail(e, fmt::format("'{}' entries must be one line of UTF-8 text", key));
  }
  return out;
}

}  // namespace tracetwin::predictors::yaml
