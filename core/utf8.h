// Whether bytes are well-formed UTF-8 (no overlong forms, surrogates or code
// points past U+10FFFF), by simdjson's validator. Names and source lines in
// the YAML files must be: yaml-cpp reads ill-formed bytes as they are, and
// its writer decodes them leniently on the way out (0xc0 0x83, an overlong
// U+0003, came back as a control character: the device-spec fuzzer's find
// of 2026-11-29).
#pragma once

#include <string_view>

namespace tracetwin::core {

bool isValidUtf8(std::string_view text);

}  // namespace tracetwin::core
