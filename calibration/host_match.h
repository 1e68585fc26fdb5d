// Whether host-CPU models describe the host a replay runs on.
//
// `calibrate` writes the host's clock, logical CPUs and cache sizes into the
// models' device spec. Models measured on another CPU predict that CPU's
// speed: between two sessions the development VM moved from a 2.45 GHz EPYC
// with 512 KiB of L2 per core to a 2.6 GHz one with 1 MiB, and the bundled
// models, calibrated on the first, put the MLP's GEMMs 17-20% above what the
// second replayed. `compare` reports the differences so that nobody reads a
// cross-host error as a model error.
#pragma once

#include <string>
#include <vector>

#include "calibration/host_probe.h"
#include "predictors/device_spec.h"

namespace tracetwin::calibration {

// Clock differences up to this fraction are the same CPU reading its
// frequency differently (sysfs maximum vs /proc's current figure).
inline constexpr double kClockTolerance = 0.03;

// What differs between the host `calibrated` was measured on and `here`, one
// phrase each ("clock 2445 MHz there, 2596 MHz here"); empty when they match,
// when `calibrated` is not a CPU, or when `here` could not be read.
std::vector<std::string> hostDifferences(const predictors::DeviceSpec& calibrated,
                                         const HostFacts& here);

}  // namespace tracetwin::calibration
