#include "calibration/cold_write_probe.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/statistics.h"

namespace tracetwin::calibration {
namespace {

// Microseconds to write every element of `v` with `value`. A float pattern
// whose bytes differ keeps the compiler from turning the loop into a memset,
// which glibc may run with non-temporal stores; ops write with plain stores.
double timedFill(std::vector<float>& v, float value) {
  const auto t0 = std::chrono::steady_clock::now();
  std::fill(v.begin(), v.end(), value);
  // Keep the stores: the compiler may not drop a fill whose result is read.
  volatile float sink = v[v.size() / 2];
  (void)sink;
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double measureColdWriteUsPerMiB(const ColdWriteProbeOptions& o) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  const int64_t bytes = std::max<int64_t>(o.bytes, kMiB);
  std::vector<float> target(size_t(bytes) / sizeof(float), 1.0f);  // faulted in
  std::vector<float> flush(size_t(std::max(o.flush_bytes, 2 * bytes)) / sizeof(float), 1.0f);
  std::vector<double> extra;
  for (int r = 0; r < std::max(o.repeats, 1); ++r) {
    timedFill(flush, 1.5f + float(r));  // evicts the target's lines
    const double cold = timedFill(target, 2.5f + float(r));
    const double warm = timedFill(target, 3.5f + float(r));
    extra.push_back(std::max(0.0, cold - warm));
  }
  return core::median(extra) / (double(bytes) / double(kMiB));
}

}  // namespace tracetwin::calibration
