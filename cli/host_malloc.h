// The host allocator settings that measuring commands (replay, compare,
// calibrate) run under. glibc's default mmap and trim thresholds move with the
// process's history: the same CPU step then pays for page faults in one
// process and not in the next (an eager cnn step took 7.0 to 11.1 ms across
// processes, 859 minor faults per step in the slow ones). A benchmark wants
// the workload's cost, not the allocator's history, so by default both
// thresholds are pinned, in the replay as in scripts/capture.py's original
// run; `--malloc default` measures with glibc's defaults.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tracetwin::cli {

enum class HostMalloc { kPinned, kDefault };

void addHostMallocOption(CLI::App& sub, HostMalloc& mode);

// Applies `mode` to this process and returns its name for reports
// ("pinned", "default"). Pinned: allocations under 32 MiB come from the heap
// and freed memory is not returned to the OS, so a steady state has no page
// faults. A no-op returning "default" where the C library is not glibc.
std::string applyHostMalloc(HostMalloc mode);

}  // namespace tracetwin::cli
