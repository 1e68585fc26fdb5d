// Outputs the allocator maps fresh for every call. glibc serves an
// allocation at or above its mmap threshold with a new mapping (when its
// heap has no free chunk that large, which a heap of smaller tensors rarely
// has) and unmaps it on free, so each call of an op with such an output
// faults in every page of it: a relu writing 64 MiB took 25.4 ms fresh
// against 2.9 ms into memory already mapped (1.37 us a page; 1.35 at 128
// and 512 MiB; Debian's torch 1.13 on the development VM). Calibration's
// grids stay below the threshold, so no kernel model holds it.
#pragma once

#include <cstdint>

#include "core/graph.h"

namespace tracetwin::predictors {

// The threshold tracetwin's measuring commands pin (cli/host_malloc.cpp, as
// scripts/capture.py runs the original): glibc's own ceiling on 64-bit.
inline constexpr int64_t kMmapThresholdBytes = int64_t{32} << 20;
inline constexpr int64_t kPageBytes = 4096;

// Bytes of `op`'s outputs on storages none of its inputs hold (memory the op
// allocated; not views, in-place or out= results) whose tensor is at least
// kMmapThresholdBytes, each storage once.
double freshMappedBytes(const core::Node& op);

}  // namespace tracetwin::predictors
