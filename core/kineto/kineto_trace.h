// A Kineto (PyTorch profiler) trace held in memory: the Chrome-trace events
// tracetwin uses, typed, plus the device and distributed metadata. Read with
// readKinetoTrace() (core/kineto/kineto_reader.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tracetwin::core::kineto {

// The `cat` of an event (or, for flow and metadata events, their `ph`).
enum class EventCategory : uint8_t {
  kCpuOp,             // "cpu_op": an operator (RecordFunction scope)
  kUserAnnotation,    // "user_annotation": record_function labels, ProfilerStep#N
  kCudaRuntime,       // "cuda_runtime": cudaLaunchKernel, cudaMemcpyAsync ...
  kCudaDriver,        // "cuda_driver": cuLaunchKernel ...
  kKernel,            // "kernel"
  kGpuMemcpy,         // "gpu_memcpy"
  kGpuMemset,         // "gpu_memset"
  kFlowStart,         // ph "s" (ac2g / fwdbwd flows)
  kFlowEnd,           // ph "f"
  kMetadata,          // ph "M"
  kProfilerOverhead,  // "overhead": CUPTI's buffer requests ... (profiler_stalls.h)
  kOther,             // anything else ("Trace", "python_function", instants ...)
};
const char* eventCategoryName(EventCategory category);
inline bool isGpuActivity(EventCategory c) {
  return c == EventCategory::kKernel || c == EventCategory::kGpuMemcpy ||
         c == EventCategory::kGpuMemset;
}
inline bool isLaunchCategory(EventCategory c) {
  return c == EventCategory::kCudaRuntime || c == EventCategory::kCudaDriver;
}
inline bool isCpuRange(EventCategory c) {
  return c == EventCategory::kCpuOp || c == EventCategory::kUserAnnotation;
}

inline constexpr int64_t kAbsent = -1;

struct KinetoEvent {
  EventCategory category = EventCategory::kOther;
  std::string name;
  int64_t pid = kAbsent;  // -1 when the trace writes a string ("Spans")
  int64_t tid = kAbsent;  // stream number for GPU activities
  double ts = 0;          // microseconds, as written (epoch-based)
  double dur = 0;         // microseconds; 0 for instant/flow/metadata events
  int64_t index = 0;      // position in traceEvents, for messages
  // args (kAbsent when not recorded)
  int64_t external_id = kAbsent;         // "External id"
  int64_t ev_idx = kAbsent;              // "Ev Idx"
  int64_t record_function_id = kAbsent;  // "Record function id" (PyTorch >= 2.4)
  int64_t sequence_number = kAbsent;     // "Sequence number" (autograd ops)
  int64_t fwd_thread_id = kAbsent;       // "Fwd thread id"
  int64_t correlation = kAbsent;         // launches and GPU activities
  int64_t stream = kAbsent;              // GPU activities
  int64_t device = kAbsent;              // GPU activities
  int64_t bytes = kAbsent;               // memcpy / memset
  int64_t flow_id = kAbsent;             // "id" of flow events

  double end() const { return ts + dur; }
};

struct DeviceProperties {
  int64_t id = 0;
  std::string name;              // "Tesla V100-SXM2-32GB"
  int64_t total_global_mem = 0;  // bytes
  int64_t compute_major = 0;
  int64_t compute_minor = 0;
  int64_t num_sms = 0;
};

struct DistributedInfo {
  std::string backend;  // "nccl"
  int64_t rank = 0;
  int64_t world_size = 1;
};

struct KinetoTrace {
  std::string source_path;
  int64_t schema_version = 0;
  std::vector<DeviceProperties> devices;
  std::optional<DistributedInfo> distributed;
  // Every event of traceEvents that tracetwin understands, in file order.
  std::vector<KinetoEvent> events;
  // Count of events per category, for summaries.
  std::vector<int64_t> category_counts;  // indexed by EventCategory

  int64_t count(EventCategory c) const {
    auto i = static_cast<size_t>(c);
    return i < category_counts.size() ? category_counts[i] : 0;
  }
};

}  // namespace tracetwin::core::kineto
