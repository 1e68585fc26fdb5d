#include "calibration/reuse_probe.h"

#include <algorithm>
#include <chrono>

#include "core/statistics.h"

namespace tracetwin::calibration {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Microseconds to read one float of every cache line of `v`, into four
// independent sums: the lines' fetch is timed, not the additions.
double timedRead(const std::vector<float>& v) {
  constexpr size_t kLine = 64 / sizeof(float);
  const auto t0 = std::chrono::steady_clock::now();
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 * kLine <= v.size(); i += 4 * kLine) {
    s0 += v[i];
    s1 += v[i + kLine];
    s2 += v[i + 2 * kLine];
    s3 += v[i + 3 * kLine];
  }
  for (; i < v.size(); i += kLine) s0 += v[i];
  volatile float sink = s0 + s1 + s2 + s3;  // keeps the loads
  (void)sink;
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// Reads and writes `bytes` of the ring from `*offset` on (wrapping), so
// each line is brought in as an op's input and output would be.
void stream(std::vector<float>& ring, size_t* offset, int64_t bytes) {
  size_t n = size_t(bytes) / sizeof(float);
  while (n > 0) {
    if (*offset >= ring.size()) *offset = 0;
    const size_t run = std::min(n, ring.size() - *offset);
    for (size_t i = *offset; i < *offset + run; ++i) ring[i] = ring[i] * 0.5f + 1.0f;
    *offset += run;
    n -= run;
  }
}

}  // namespace

double capacityFromColdShares(const std::vector<int64_t>& distances_bytes,
                              const std::vector<double>& cold_share, double target_bytes) {
  const size_t n = std::min(distances_bytes.size(), cold_share.size());
  if (n == 0) return 0.0;
  const double q = kCapacityColdShare;
  for (size_t i = 0; i < n; ++i) {
    if (cold_share[i] < q) continue;
    double at = double(distances_bytes[i]);
    if (i > 0 && cold_share[i] > cold_share[i - 1]) {
      const double w = (q - cold_share[i - 1]) / (cold_share[i] - cold_share[i - 1]);
      at = double(distances_bytes[i - 1]) + w * double(distances_bytes[i] - distances_bytes[i - 1]);
    }
    return at + (1 - q) * target_bytes;
  }
  return double(distances_bytes[n - 1]) + (1 - q) * target_bytes;  // at least that
}

namespace {

struct Reads {
  std::vector<double> hot, cold;
  std::vector<std::vector<double>> at;  // [distance][repeat]
};

// Shares of the target gone cold per distance, between the read after the
// shortest distance and the cold one; empty when those do not differ.
std::vector<double> coldShares(const Reads& r, double* resident_us, double* cold_us) {
  *resident_us = core::median(r.at.front());
  *cold_us = core::median(r.cold);
  // A cold read under 1.2x the cached one says nothing about the caches.
  if (!(*cold_us > 1.2 * *resident_us)) return {};
  std::vector<double> shares;
  for (const std::vector<double>& d : r.at)
    shares.push_back(
        std::clamp((core::median(d) - *resident_us) / (*cold_us - *resident_us), 0.0, 1.0));
  return shares;
}

}  // namespace

ReuseProbe measureReuseCapacity(const ReuseProbeOptions& o) {
  ReuseProbe out;
  if (o.distances_mib.empty()) return out;
  const int64_t target_bytes = std::max<int64_t>(o.target_bytes, 64 * 1024);
  std::vector<float> target(size_t(target_bytes) / sizeof(float), 1.0f);
  std::vector<float> ring(size_t(std::max(o.ring_bytes, 4 * target_bytes)) / sizeof(float), 1.0f);
  std::vector<int64_t> distances;
  for (int64_t d : o.distances_mib) distances.push_back(d * kMiB);
  size_t offset = 0;
  Reads all;
  all.at.resize(distances.size());
  for (int round = 0; round < std::max(o.rounds, 1); ++round) {
    Reads r;
    r.at.resize(distances.size());
    for (int rep = 0; rep < std::max(o.repeats, 1); ++rep) {
      timedRead(target);
      r.hot.push_back(timedRead(target));
      stream(ring, &offset, int64_t(ring.size() * sizeof(float)));
      r.cold.push_back(timedRead(target));
      for (size_t d = 0; d < distances.size(); ++d) {
        timedRead(target);
        stream(ring, &offset, distances[d]);
        r.at[d].push_back(timedRead(target));
      }
    }
    double resident = 0, cold = 0;
    const std::vector<double> shares = coldShares(r, &resident, &cold);
    out.round_capacity_bytes.push_back(
        shares.empty() ? 0.0 : capacityFromColdShares(distances, shares, double(target_bytes)));
    all.hot.insert(all.hot.end(), r.hot.begin(), r.hot.end());
    all.cold.insert(all.cold.end(), r.cold.begin(), r.cold.end());
    for (size_t d = 0; d < distances.size(); ++d)
      all.at[d].insert(all.at[d].end(), r.at[d].begin(), r.at[d].end());
  }
  out.hot_us = core::median(all.hot);
  out.cold_share = coldShares(all, &out.resident_us, &out.cold_us);
  std::vector<double> found;
  for (double c : out.round_capacity_bytes)
    if (c > 0) found.push_back(c);
  if (!found.empty()) out.capacity_bytes = core::median(found);
  return out;
}

}  // namespace tracetwin::calibration
