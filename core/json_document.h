// A user's JSON file (model manifest, overheads table, a trace's meta file)
// parsed whole, with every nlohmann error turned into an InputError that
// names the file: a syntax error with its byte offset, and a number no double
// holds (1e999), which nlohmann reports as out_of_range rather than as a
// parse error: a manifest holding one ended the process (fuzz/model_set_fuzz,
// 2026-11-29).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tracetwin::core {

nlohmann::json parseJsonDocument(std::string_view text, const std::string& source);

}  // namespace tracetwin::core
