// Typed reads of the fields of model-file JSON objects (manifest entries,
// overhead tables). `where` names the object in the error, e.g.
// "bandwidth_curve model" or "models/manifest.json: code_cold", so a bad file
// is reported with its name and the field.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace tracetwin::predictors {

// obj[key] as a number; InputError "<where>: expected number '<key>'" when it
// is missing or not a number.
double requiredNumber(const nlohmann::json& obj, const char* key, const std::string& where);

// obj[key] as a count (samples, pairs): a whole number from 0 to 2^53, which
// a double holds exactly. InputError naming the field otherwise: a count of
// 1e300 was cast to int64_t (undefined behaviour).
int64_t requiredCount(const nlohmann::json& obj, const char* key, const std::string& where);

// obj[key] as a name -> number table; empty when the key is absent (older
// model files lack some tables). A value that is not a number, or is below
// `min_value`, is an InputError naming the entry: "<where>.<key>["name"]".
std::map<std::string, double> optionalNumberMap(
    const nlohmann::json& obj, const char* key, const std::string& where,
    double min_value = -std::numeric_limits<double>::infinity());

}  // namespace tracetwin::predictors
