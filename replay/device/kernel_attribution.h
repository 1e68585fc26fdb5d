// Pure record processing behind the CUPTI collector: pairs external-correlation
// records with kernel/memcpy/memset records, then sums device time per op.
// Plain structs in, plain structs out, so tests feed fake records.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "replay/device/kernel_collector.h"

namespace tracetwin::replay::device {

// CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: the external id (our op) that was
// on top of the stack when the API call with `correlation_id` was made.
struct ExternalCorrelationRecord {
  uint64_t external_id = 0;
  uint32_t correlation_id = 0;
};

// CONCURRENT_KERNEL / MEMCPY / MEMSET, reduced to what attribution needs.
struct DeviceActivityRecord {
  uint32_t correlation_id = 0;
  std::string name;
  int64_t stream = 0;
  int device = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  CollectedKernel::Kind kind = CollectedKernel::kKernel;
};

struct ActivityBatch {
  std::vector<ExternalCorrelationRecord> correlations;
  std::vector<DeviceActivityRecord> activities;
};

struct AttributionCounts {
  size_t attributed = 0;
  size_t unattributed = 0;  // no external-correlation record for its correlation id
  size_t malformed = 0;     // end < start (CUPTI writes 0 when it lost the end); dropped
  size_t conflicting_correlations = 0;  // one correlation id, two external ids; first kept
};

// Kernels with their op, sorted by (start, end, stream).
std::vector<CollectedKernel> attributeActivities(const ActivityBatch& batch,
                                                 AttributionCounts* counts = nullptr);

struct OpDeviceTime {
  uint64_t op = 0;
  int kernels = 0;
  int memcpys = 0;
  int memsets = 0;
  uint64_t sum_ns = 0;    // sum of durations: device work, counts overlap twice
  uint64_t union_ns = 0;  // union of intervals: wall time the device was busy for it
  uint64_t first_start_ns = 0;
  uint64_t last_end_ns = 0;
  // Including ops nested inside this one (equal to the above without nesting).
  uint64_t inclusive_sum_ns = 0;
  uint64_t inclusive_union_ns = 0;
};

struct IterationDeviceTime {
  std::vector<OpDeviceTime> per_op;  // ops in order of their first activity
  uint64_t busy_sum_ns = 0;          // all activity, attributed or not
  uint64_t busy_union_ns = 0;        // device-busy wall time ("GPU active")
  uint64_t attributed_union_ns = 0;  // busy time covered by some op
  uint64_t span_ns = 0;              // first start to last end
  size_t unattributed_records = 0;
  // attributed_union_ns / busy_union_ns; 1 when there was no activity.
  double covered_share = 1.0;
};

// `parents` maps an op to its enclosing op (KernelCollector::opParents()).
IterationDeviceTime summarizeDeviceTime(const std::vector<CollectedKernel>& kernels,
                                        const std::unordered_map<uint64_t, uint64_t>& parents = {});


}  // namespace tracetwin::replay::device
