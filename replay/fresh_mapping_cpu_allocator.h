// LibTorch's CPU allocator under `--malloc pinned`: every tensor of at least
// the pinned mmap threshold gets a new anonymous mapping, unmapped when it is
// freed, and smaller tensors come from c10's own allocation as before.
//
// Pinned glibc alone promises this only while its heap has no free chunk that
// large: glibc looks through its bins before it maps, so a launch whose freed
// tensors happened to coalesce into a big enough chunk served a 51 MiB
// gradient from the heap and stopped faulting, while the next launch of the
// same trace faulted its 12,501 pages in every iteration (a sweep plan's
// replay at 51.6 ms against 186-199 ms in the other launches,
// docs/sweeps.md). The predictor charges those pages in every call
// (predictors/host/fresh_pages.h); mapping them here makes every launch the
// one it predicts, and a replay's step no longer depends on its heap's
// history.
#pragma once

#include <cstddef>

namespace tracetwin::replay {

// Makes this process's CPU allocator map tensors of `threshold_bytes` or more
// fresh, for tensors allocated from now on. Idempotent; a later call's
// threshold applies from then on.
void installFreshMappingCpuAllocator(size_t threshold_bytes);
// Puts back the allocator in place before the first install. Tensors mapped
// under it and still alive are unmapped through it when freed.
void uninstallFreshMappingCpuAllocator();

// Tensors mapped fresh so far.
size_t freshMappedTensors();

}  // namespace tracetwin::replay
