// LibTorch's CPU allocator for calibration replays: tensor memory from a
// SizeCache (replay/size_cache.h) over c10's own aligned allocation, so that
// every repeat of an op after its first writes into pages already mapped,
// as a GPU step's outputs come from the CUDA caching allocator. LibTorch
// offers no such allocator to a server build (c10's CPUCachingAllocator is
// mobile-only and its header is not installed).
#pragma once

#include <cstddef>

#include "replay/size_cache.h"

namespace tracetwin::replay {

// What stays cached at most: more than the largest unit's working set (its
// tables, gradients and 128 MiB cache-evicting streams), a small part of a
// host that runs calibration.
inline constexpr size_t kCpuSizeCacheBytes = size_t{2} << 30;

// Makes the size cache this process's CPU allocator for tensors allocated
// from now on; tensors allocated before keep their own deleter. Idempotent.
// The cache lives until the process ends, so tensors freed late find it.
void installCachingCpuAllocator();
// Puts back the allocator that was in place before the first install; the
// blocks the cache still holds go back to c10. Tensors the cache handed out
// may still be alive: they are freed through it as before.
void uninstallCachingCpuAllocator();

// What the cache did so far (zeros before the first install).
SizeCacheStats cpuSizeCacheStats();

}  // namespace tracetwin::replay
