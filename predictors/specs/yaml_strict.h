// Strict reading of YAML mappings: every key must be known, required keys
// present, and values of the expected type. Errors are InputError
// "FILE:LINE:COL: what was expected" (1-based, from yaml-cpp's Mark).
// A quoted scalar is a string: "2" is not a number (YAML's own typing; a
// number typed in quotes is most often a field mistaken for another), and
// names and strings are never empty.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tracetwin::predictors::yaml {

// Parses text; a syntax error becomes InputError with its position.
YAML::Node parse(const std::string& text, const std::string& source);
YAML::Node parseFile(const std::string& path);
// The whole of a text file; InputError "PATH: cannot open WHAT" when it
// cannot be read (WHAT: "sweep file", "file", ...).
std::string readTextFile(const std::string& path, const std::string& what);

class MapReader {
 public:
  // `what` names the mapping in messages ("device", "links[1]").
  MapReader(const YAML::Node& node, std::string source, std::string what);
  // Throws for keys not in `known` (listing the known ones) and for missing
  // `required` keys.
  void checkKeys(std::initializer_list<const char*> required,
                 std::initializer_list<const char*> optional) const;

  bool has(const char* key) const;
  YAML::Node get(const char* key) const;
  std::string str(const char* key) const;
  double positive(const char* key) const;     // number > 0
  // A number from `lo` to `hi`: rates and clocks bounded six or more orders
  // of magnitude around any device's, so that 1e-300 GB/s is refused here
  // rather than predicted as an infinite time blamed on the model set.
  double within(const char* key, double lo, double hi) const;
  double nonNegative(const char* key) const;  // number >= 0
  int64_t positiveInt(const char* key) const;  // at most 2^62
  // An integer from `lo` to `hi` (|lo|, |hi| at most 2^62).
  int64_t intFrom(const char* key, int64_t lo, int64_t hi) const;
  // A size given in units of `unit_bytes` (memory_gb, size_mb), in whole
  // bytes; at most 2^62.
  int64_t positiveBytes(const char* key, double unit_bytes) const;
  std::vector<std::string> strList(const char* key) const;
  const std::string& source() const { return source_; }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const;

 private:
  YAML::Node node_;
  std::string source_;
  std::string what_;
};

// n.as<T>() for a plain scalar; a quoted one ("2") throws as a mistyped one does.
template <typename T>
T plainAs(const YAML::Node& n) {
  if (n.IsScalar() && n.Tag() == "!") throw YAML::TypedBadConversion<T>(n.Mark());
  return n.as<T>();
}

[[noreturn]] void failAt(const std::string& source, const YAML::Node& at,
                         const std::string& message);

}  // namespace tracetwin::predictors::yaml
