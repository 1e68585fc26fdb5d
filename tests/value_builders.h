// Recorded argument values (ints, doubles, bools, None, strings, lists) for tests that
// build execution-trace nodes by hand; shared by the replay, predictor and
// communication tests' own node builders.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/value.h"

namespace tracetwin::testing {

inline core::Value intValue(int64_t x) {
  core::Value v;
  v.kind = core::ValueKind::kInt;
  v.type = "Int";
  v.int_value = x;
  return v;
}

inline core::Value doubleValue(double x) {
  core::Value v;
  v.kind = core::ValueKind::kDouble;
  v.type = "Double";
  v.double_value = x;
  return v;
}

inline core::Value boolValue(bool b) {
  core::Value v;
  v.kind = core::ValueKind::kBool;
  v.type = "Bool";
  v.bool_value = b;
  return v;
}

inline core::Value noneValue() {
  core::Value v;
  v.kind = core::ValueKind::kNone;
  v.type = "None";
  return v;
}

// `type` as the trace records it: "GenericList[Int,Int]", "GenericList[Tensor]".
inline core::Value listValue(std::vector<core::Value> elements,
                             std::string type = "GenericList[]") {
  core::Value v;
  v.kind = core::ValueKind::kList;
  v.type = std::move(type);
  v.elements = std::move(elements);
  return v;
}

inline core::Value stringValue(std::string s) {
  core::Value v;
  v.kind = core::ValueKind::kString;
  v.type = "String";
  v.string_value = std::move(s);
  return v;
}

inline core::Value intListValue(const std::vector<int64_t>& xs) {
  std::vector<core::Value> elements;
  for (int64_t x : xs) elements.push_back(intValue(x));
  return listValue(std::move(elements));
}

}  // namespace tracetwin::testing
