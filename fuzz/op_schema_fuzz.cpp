// libFuzzer entry point for operator schema strings (a trace's op_schema
// field, parsed by the predictor's features and the replay's planner): any
// input must give an OpSchema or a tracetwin::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/op_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)tracetwin::core::parseOpSchema(text, "fuzz");
  } catch (const tracetwin::Error&) {
    // refusing bad input with a typed error is the expected outcome
  }
  return 0;
}
