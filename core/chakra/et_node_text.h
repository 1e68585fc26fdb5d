// Internal to core/chakra: a node's recorded inputs or outputs as the ET's
// JSON text again (values, shapes, types, strides), for the IOInfo strings
// of an exported Chakra node. The ET reader reads the text back into equal
// Values (tests/core/chakra_test.cpp checks the round trip).
#pragma once

#include <string>
#include <vector>

#include "core/value.h"

namespace tracetwin::core::chakra {

struct SideText {
  std::string values, shapes, types;
  std::string strides;  // empty when no tensor records strides (traces before 1.1.1)
};

SideText sideText(const std::vector<Value>& side);

}  // namespace tracetwin::core::chakra
