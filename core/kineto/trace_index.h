// Lookup tables over a KinetoTrace shared by the linker, the overhead
// extractor and the rank summary: CPU ranges per thread in execution order,
// launches per thread, and GPU activity <-> launch by correlation id.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "core/kineto/kineto_trace.h"

namespace tracetwin::core::kineto {

struct TraceIndex {
  // cpu_op + user_annotation event indices per tid in entry order - sorted
  // by (ts, External id, -dur, file position): parents before their
  // children, as the ET orders ids.
  std::map<int64_t, std::vector<size_t>> cpu_by_tid;
  // cuda_runtime / cuda_driver event indices per tid, sorted by ts.
  std::map<int64_t, std::vector<size_t>> launches_by_tid;
  // correlation id -> launch event index.
  std::unordered_map<int64_t, size_t> launch_by_correlation;
  // launch event index -> GPU activity indices it caused (usually one).
  std::unordered_map<size_t, std::vector<size_t>> activities_by_launch;
  // GPU activities (kernel, memcpy, memset) in file order.
  std::vector<size_t> activities;
  // GPU activities whose correlation matches no launch.
  int64_t orphan_activities = 0;
};

TraceIndex buildTraceIndex(const KinetoTrace& trace);

// True for GPU activities that are NCCL collectives (kernel name contains
// "nccl", any case: ncclKernel_AllReduce_..., ncclDevKernel_...).
bool isCommunicationKernel(const KinetoEvent& event);

}  // namespace tracetwin::core::kineto
