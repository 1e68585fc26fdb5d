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
