// Whether host-CPU models, or a trace's original run, describe the host a
// replay runs on.
//
// `calibrate` writes the host's clock, logical CPUs and cache sizes into the
// models' device spec. Models measured on another CPU predict that CPU's
// speed: between two sessions the development VM moved from a 2.45 GHz EPYC
// with 512 KiB of L2 per core to a 2.6 GHz one with 1 MiB, and the bundled
// models, calibrated on the first, put the MLP's GEMMs 17-20% above what the
// second replayed. `compare` reports the differences so that nobody reads a
// cross-host error as a model error; `replay` does the same for the original
// iteration time of a trace's meta file.
#pragma once

#include <string>
#include <vector>

#include "calibration/host_facts.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::calibration {

// Clock differences up to this fraction are the same CPU reading its
// frequency differently (sysfs maximum vs /proc's current figure).
inline constexpr double kClockTolerance = 0.03;

// What differs between host `there` and `here`, one phrase each ("clock
// 2445 MHz there, 2596 MHz here"); empty when they match. A figure unknown on
// either side (0, -1, empty) is no difference.
std::vector<std::string> hostDifferences(const HostFacts& there, const HostFacts& here);

// One line for a person: "AMD EPYC (family 25, model 17), 2 logical CPUs,
// 2596 MHz, L1 32 KiB, L2 1 MiB, L3 32 MiB"; unknown figures are left out.
std::string describeHost(const HostFacts& host);

// The same for the host `calibrated` was measured on (its clock, logical CPUs
// and caches); empty when `calibrated` is not a CPU.
std::vector<std::string> hostDifferences(const predictors::DeviceSpec& calibrated,
                                         const HostFacts& here);

}  // namespace tracetwin::calibration
