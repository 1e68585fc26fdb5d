#include "cli/host_malloc.h"

#include <map>

#include "predictors/host/fresh_pages.h"

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

void addHostMallocOption(CLI::App& sub, HostMalloc& mode) {
  const std::map<std::string, HostMalloc> names{{"pinned", HostMalloc::kPinned},
                                                {"default", HostMalloc::kDefault}};
  sub.add_option("--malloc", mode,
                 "host allocator: pinned (glibc's mmap and trim thresholds fixed, no page faults "
                 "from the allocator's history; as scripts/capture.py runs the original) or "
                 "default (glibc's own)")
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
      ->default_str("pinned");
}

std::string applyHostMalloc(HostMalloc mode) {
  if (mode == HostMalloc::kDefault) return "default";
#if defined(__GLIBC__)
  // Setting either threshold explicitly also turns glibc's adjustment off.
  if (mallopt(M_MMAP_THRESHOLD, kPinnedMmapThreshold) == 1 &&
      mallopt(M_TRIM_THRESHOLD, kPinnedTrimThreshold) == 1) {
    return "pinned";
  }
#endif
  return "default";
}

}  // namespace tracetwin::cli
