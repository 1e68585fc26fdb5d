// Internal to core: how many cores this process may run on, for the reader's
// parser threads and finalize's second thread. Not for other layers.
#pragma once

namespace tracetwin::core::detail {

// The CPUs of this process's affinity mask (taskset, cgroups' cpusets), at
// least 1; hardware_concurrency() when the mask cannot be read.
unsigned usableCores();

}  // namespace tracetwin::core::detail
