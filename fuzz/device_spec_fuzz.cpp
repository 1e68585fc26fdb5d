// libFuzzer entry point for device-spec YAML (configs/devices/, a models
// directory's device.yaml): any input must give a DeviceSpec or a
// tracetwin::Error (yaml-cpp's own exceptions included: the loader must turn
// them into InputError with the file, line and column). A spec that loads
// must also survive its own round trip: written back with deviceSpecToYaml
// and read again, it writes the same text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/errors.h"
#include "predictors/specs/device_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tracetwin::predictors::DeviceSpec;
  const std::string text(reinterpret_cast<const char*>(data), size);
  DeviceSpec spec;
  try {
    spec = tracetwin::predictors::parseDeviceSpec(text, "fuzz.yaml");
  } catch (const tracetwin::Error&) {
    return 0;  // refusing bad input with a typed error is the expected outcome
  }
  const std::string written = tracetwin::predictors::deviceSpecToYaml(spec);
  try {
    const DeviceSpec again = tracetwin::predictors::parseDeviceSpec(written, "fuzz-again.yaml");
    const std::string rewritten = tracetwin::predictors::deviceSpecToYaml(again);
    if (rewritten != written) {
      std::fprintf(stderr, "round trip changed the spec:\n%s\n--- became ---\n%s\n",
                   written.c_str(), rewritten.c_str());
      std::abort();
    }
  } catch (const tracetwin::Error& e) {
    // What the writer wrote, the reader must take.
    std::fprintf(stderr, "the reader refused what the writer wrote: %s\n%s\n", e.what(),
                 written.c_str());
    std::abort();
  }
  return 0;
}
