// Measures what a first write to fresh anonymous memory costs per 4 KiB page
// (the fault, and the kernel zeroing the page) on top of the same write to
// memory already mapped. An allocation at or above glibc's mmap threshold
// is mapped fresh and unmapped on free, so an op whose output is that large
// pays it on every call, and its free unmaps it again; calibration's grids
// never reach either.
#pragma once

#include <cstdint>

namespace tracetwin::calibration {

struct PageFaultProbeOptions {
  int64_t bytes = int64_t{64} << 20;  // above the pinned 32 MiB mmap threshold
  int repeats = 5;
};

struct PageCosts {
  double fault_us = 0;  // median over repeats of (fresh write - warm write) / pages
  double unmap_us = 0;  // median of munmap of the written mapping / pages
};

// Microseconds per 4 KiB page. Throws RuntimeFailure when the OS refuses the
// mapping.
PageCosts measurePageCosts(const PageFaultProbeOptions& options = {});

}  // namespace tracetwin::calibration
