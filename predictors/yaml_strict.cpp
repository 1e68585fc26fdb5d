#include "predictors/yaml_strict.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/errors.h"

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

YAML::Node parseFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), path);
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
  for (const auto& kv : node_) {
    const std::string key = kv.first.as<std::string>();
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

std::string MapReader::str(const char* key) const {
  YAML::Node v = get(key);
  if (!v.IsScalar()) fail(v, fmt::format("'{}' in {} must be a string", key, what_));
  return v.as<std::string>();
}

namespace {
double number(const MapReader& r, const YAML::Node& v, const char* key) {
  if (!v.IsScalar()) r.fail(v, fmt::format("'{}' must be a number", key));
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

double MapReader::nonNegative(const char* key) const {
  YAML::Node v = get(key);
  double d = number(*this, v, key);
  if (d < 0) fail(v, fmt::format("'{}' must be >= 0, got {}", key, d));
  return d;
}

int64_t MapReader::positiveInt(const char* key) const {
  YAML::Node v = get(key);
  double d = number(*this, v, key);
  if (d <= 0 || std::floor(d) != d) fail(v, fmt::format("'{}' must be a positive integer", key));
  return static_cast<int64_t>(d);
}

std::vector<std::string> MapReader::strList(const char* key) const {
  YAML::Node v = get(key);
  if (!v.IsSequence()) fail(v, fmt::format("'{}' must be a list of strings", key));
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.IsScalar()) fail(e, fmt::format("'{}' entries must be strings", key));
    out.push_back(e.as<std::string>());
  }
  return out;
}

}  // namespace tracetwin::predictors::yaml
