#include "cli/host_malloc.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

#include "predictors/host/fresh_pages.h"
#include "replay/caching_cpu_allocator.h"
#include "replay/fresh_mapping_cpu_allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tracetwin::cli {

// The values glibc's own dynamic thresholds top out at (mmap: 32 MiB on
// 64-bit) and a trim threshold no iteration's frees reach. The same values as
// scripts/capture.py and scripts/fidelity.py use; the predictor charges page
// faults to outputs above the mmap threshold (predictors/host/fresh_pages.h).
constexpr int kPinnedMmapThreshold = static_cast<int>(predictors::kMmapThresholdBytes);
constexpr int kPinnedTrimThreshold = 1 << 30;
// What `heap` faults in up front. Without it the heap grows by faulting
// fresh pages until its free chunks fit the working set: posix_memalign
// (ATen's allocator) asks for more than a freed chunk of the same tensor
// holds, and a 40 MiB relu's replay faulted its 10,240 output pages in each
// of its first four iterations. Most of calibration's units hold less than
// this (tables and gradients up to 64 MiB, streams up to 128 MiB).
constexpr size_t kHeapReserveBytes = size_t{512} << 20;
// `heap` never trims: with the pinned 1 GiB, a calibration whose heap once
// grew past it (token embeddings of 128 MiB outputs) handed the reserve back
// when the top chunk was freed, and later units faulted again (a 61 MiB
// embedding_backward 176 and 290 ms in two of five repeats, 2.3-2.5 ms in
// the others). glibc reads -1 as "never" (mallopt(3)).
constexpr int kNeverTrim = -1;

namespace {

#if defined(__GLIBC__)
// Grows the heap by `bytes`, writes each page so that it is faulted in, and
// frees it back into the heap's top chunk.
void faultInHeap(size_t bytes) {
  auto* block = static_cast<volatile char*>(std::malloc(bytes));
  if (block == nullptr) return;  // the measurement then pays the faults
  const long page = sysconf(_SC_PAGESIZE);
  const size_t stride = page > 0 ? size_t(page) : 4096;
  for (size_t at = 0; at < bytes; at += stride) block[at] = 1;
  std::free(const_cast<char*>(block));
}
#endif

}  // namespace

void addHostMallocOption(CLI::App& sub, HostMalloc& mode) {
  const std::map<std::string, HostMalloc> names{{"pinned", HostMalloc::kPinned},
                                                {"default", HostMalloc::kDefault},
                                                {"heap", HostMalloc::kHeap},
                                                {"caching", HostMalloc::kCaching}};
  CLI::Option* option =
      sub.add_option(
             "--malloc", mode,
             "host allocator: pinned (glibc's mmap and trim thresholds fixed and tensors of 32 MiB "
             "or more mapped fresh by every call, so no page faults depend on the allocator's "
             "history; scripts/capture.py pins the same thresholds), heap "
             "(mmap and trimming off, 512 MiB faulted in up front: outputs of 32 MiB and more "
             "reuse memory instead of faulting fresh pages in every call), caching (heap, "
             "and tensors reuse freed memory of their size: no repeat after an op's first "
             "faults; calibrate's default) or default (glibc's own)")
          ->transform(CLI::CheckedTransformer(names, CLI::ignore_case));
  // The help names the caller's default (calibrate's is caching, the others' pinned).
  for (const auto& [name, value] : names)
    if (value == mode) option->default_str(name);
}

std::string applyHostMalloc(HostMalloc mode) {
  if (mode == HostMalloc::kDefault) return "default";
  if (mode == HostMalloc::kCaching) {
    // Heap underneath: what bypasses c10's allocator (a library's own
    // buffers) is not mapped fresh either, and the cache's evictions go back
    // to a heap that later blocks come from.
    applyHostMalloc(HostMalloc::kHeap);
    replay::installCachingCpuAllocator();
    return "caching";
  }
#if defined(__GLIBC__)
  // Setting either threshold explicitly also turns glibc's adjustment off.
  if (mallopt(M_MMAP_THRESHOLD, kPinnedMmapThreshold) == 1 &&
      mallopt(M_TRIM_THRESHOLD, kPinnedTrimThreshold) == 1) {
    // With no mmapped chunks allowed glibc extends a heap for any size (a
    // request too large for a thread's arena is retried in the main one),
    // and with no trimming it keeps what it grew.
    if (mode == HostMalloc::kPinned || mallopt(M_MMAP_MAX, 0) != 1 ||
        mallopt(M_TRIM_THRESHOLD, kNeverTrim) != 1) {
      // glibc maps at the threshold only when its heap has no free chunk
      // that large; tensors are mapped whatever the heap holds.
      replay::installFreshMappingCpuAllocator(size_t(kPinnedMmapThreshold));
      return "pinned";
    }
    faultInHeap(kHeapReserveBytes);
    return "heap";
  }
#endif
  return "default";
}

std::string hostMallocUse(HostMalloc mode) {
  if (mode != HostMalloc::kCaching) return "";
  const replay::SizeCacheStats s = replay::cpuSizeCacheStats();
  constexpr double kMiB = 1 << 20;
  return fmt::format(
      "host allocator: caching, {} of {} tensor allocations served by freed memory of their size "
      "({} blocks evicted, at most {:.0f} MiB kept)",
      s.hits, s.hits + s.misses, s.evicted, double(s.peak_cached_bytes) / kMiB);
}

}  // namespace tracetwin::cli
