#include "core/utf8.h"

#include <simdjson.h>

namespace tracetwin::core {

bool isValidUtf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

}  // namespace tracetwin::core
