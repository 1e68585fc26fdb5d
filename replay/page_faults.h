// Minor page faults of this process, read around each replayed iteration.
// A fault costs about a microsecond: the 2,560 of a freshly placed 10 MB
// tensor add ~3 ms to an iteration, so an iteration whose allocations land
// in new heap is an outlier of the allocator, not of the ops. The report
// lists them so a reader can tell the two apart. Torch-free.
#pragma once

#include <cstdint>

namespace tracetwin::replay {

// Minor page faults of the process so far; -1 where the OS does not say.
int64_t minorPageFaults();

}  // namespace tracetwin::replay
