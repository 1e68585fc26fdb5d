#include "calibration/page_fault_probe.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/errors.h"
#include "core/statistics.h"
#include "predictors/host/fresh_pages.h"

namespace tracetwin::calibration {
namespace {

using predictors::kPageBytes;

double microsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

void* mapAnonymous(int64_t bytes) {
  void* p =
      mmap(nullptr, size_t(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw RuntimeFailure(fmt::format("page-fault probe: mmap of {} bytes failed", bytes));
  }
  return p;
}

// Microseconds to write every byte of `p`.
double timedFill(void* p, int64_t bytes, int value) {
  const auto t0 = std::chrono::steady_clock::now();
  std::memset(p, value, size_t(bytes));
  // Keep the stores: the compiler may not drop a memset whose result is read.
  volatile unsigned char sink = static_cast<unsigned char*>(p)[bytes - 1];
  (void)sink;
  return microsSince(t0);
}

}  // namespace

PageCosts measurePageCosts(const PageFaultProbeOptions& o) {
  const int64_t bytes = std::max<int64_t>(o.bytes, kPageBytes);
  const double pages = double(bytes / kPageBytes);
  std::vector<double> fault, unmap;
  void* warm = mapAnonymous(bytes);
  timedFill(warm, bytes, 1);  // fault it in once
  for (int r = 0; r < std::max(o.repeats, 1); ++r) {
    void* fresh = mapAnonymous(bytes);
    const double fresh_us = timedFill(fresh, bytes, r);
    const auto t0 = std::chrono::steady_clock::now();
    munmap(fresh, size_t(bytes));
    unmap.push_back(microsSince(t0) / pages);
    const double warm_us = timedFill(warm, bytes, r);
    fault.push_back(std::max(0.0, fresh_us - warm_us) / pages);
  }
  munmap(warm, size_t(bytes));
  return {core::median(fault), core::median(unmap)};
}

}  // namespace tracetwin::calibration
