#include "core/json_document.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tracetwin::core {

nlohmann::json parseJsonDocument(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: byte {}: invalid JSON: {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: invalid JSON: {}", source, e.what()));
  }
}

}  // namespace tracetwin::core
