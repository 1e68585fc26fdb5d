#include "predictors/models/json_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"

namespace tracetwin::predictors {

double requiredNumber(const nlohmann::json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) {
    throw InputError(fmt::format("{}: expected number '{}'", where, key));
  }
  return it->get<double>();
}

int64_t requiredCount(const nlohmann::json& obj, const char* key, const std::string& where) {
  constexpr double kMaxCount = 9007199254740992.0;  // 2^53
  const double count = requiredNumber(obj, key, where);
  if (!(count >= 0 && count <= kMaxCount) || count != std::floor(count)) {
    throw InputError(
        fmt::format("{}: {} must be a whole number from 0 to 2^53, got {:g}", where, key, count));
  }
  return static_cast<int64_t>(count);
}

std::map<std::string, double> optionalNumberMap(const nlohmann::json& obj, const char* key,
                                                const std::string& where, double min_value) {
  std::map<std::string, double> out;
  auto it = obj.find(key);
  if (it == obj.end()) return out;
  if (!it->is_object()) throw InputError(fmt::format("{}.{}: expected an object", where, key));
  for (const auto& [name, v] : it->items()) {
    if (!v.is_number() || v.get<double>() < min_value) {
      const std::string bound =
          std::isfinite(min_value) ? fmt::format(" >= {}", min_value) : std::string();
      throw InputError(fmt::format("{}.{}[\"{}\"]: expected a number{}", where, key, name, bound));
    }
    out[name] = v.get<double>();
  }
  return out;
}

}  // namespace tracetwin::predictors
