// How much other traffic a tensor survives in this host's caches: the
// capacity the predictor's reuse-distance model (predictors/host/cache_reuse.h)
// judges cold inputs against. A streaming benchmark's bandwidth knee is not
// it: on the family-25 EPYC (32 MiB L3) the elementwise curve falls off at
// 8 MiB of op traffic, while embbag's 1.28 MB gradients, re-read after 11-20
// MB of other traffic, were zeroed in 19-27 us, near their cache-hot 19 us
// and far from the 50 us of a DRAM read.
//
// The probe reads a target buffer (warm), streams `distance` bytes of lines
// not cached through a read-modify-write, reads the target again and times
// it between the read after the shortest distance (out of the core's own
// caches, in the last-level one) and the read after a flush. The capacity is
// the LRU cache that would have lost the same share of the target at the
// distance where a quarter of it went cold: that distance plus 3/4 of the
// target.
//
// A quarter, not a half: the VM's last-level cache resists scans. In some
// processes long streams evicted the target steadily (a quarter cold at
// 44-47 MiB, half at 58-65, all at 96); in others a quarter went cold at
// 40-44 MiB and then 96-128 MiB of streaming left it at 12-23%, the cache
// having stopped keeping what streams in. The onset is the same in both;
// where half of it went cold is not. A step's traffic is no single scan.
#pragma once

#include <cstdint>
#include <vector>

namespace tracetwin::calibration {

// The share of the target gone cold that places the capacity (see above).
inline constexpr double kCapacityColdShare = 0.25;

struct ReuseProbeOptions {
  int64_t target_bytes = int64_t{4} << 20;
  // Traffic between the two reads, ascending; the first beyond L2.
  std::vector<int64_t> distances_mib = {2, 4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128};
  // Lines streamed through come from a ring this large, so none is cached
  // from its previous use; also the flush before the cold reference.
  int64_t ring_bytes = int64_t{512} << 20;
  // Each round takes the median of its repeats and finds a capacity; the
  // result is the median round's.
  int rounds = 5;
  int repeats = 5;
};

struct ReuseProbe {
  double hot_us = 0;       // the target read right after reading it (L1/L2)
  double resident_us = 0;  // after the shortest distance: from the last-level cache
  double cold_us = 0;      // after the whole ring
  // Per distance: the share of the target that went cold, between the
  // resident and the cold read (median over every round's repeats, 0-1).
  std::vector<double> cold_share;
  // Per round: where the share crossed kCapacityColdShare (linear between
  // distances) plus the rest of the target, or the longest distance plus
  // that where it never did (the cache held more); 0 where the reads could
  // not tell cached from cold.
  std::vector<double> round_capacity_bytes;
  double capacity_bytes = 0;  // the median round's; 0 when none could tell
};

ReuseProbe measureReuseCapacity(const ReuseProbeOptions& options = {});

// One round's capacity from its shares (exposed for tests): see ReuseProbe.
double capacityFromColdShares(const std::vector<int64_t>& distances_bytes,
                              const std::vector<double>& cold_share, double target_bytes);

}  // namespace tracetwin::calibration
