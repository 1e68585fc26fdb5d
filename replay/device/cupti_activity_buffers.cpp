#include "replay/device/cupti_activity_buffers.h"

#include <cupti.h>

#include <array>

#include "replay/device/cupti_check.h"

namespace tracetwin::replay::device {
namespace {

// Record layouts change with CUDA releases; only fields every version keeps at
// the same place are read (start, end, deviceId, streamId, correlationId, name).
#if CUPTI_API_VERSION >= 130000  // CUDA 13
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;
#else  // CUDA 12.x
using KernelActivity = CUpti_ActivityKernel9;
using MemcpyActivity = CUpti_ActivityMemcpy5;
#endif
using MemsetActivity = CUpti_ActivityMemset4;

// Names as Kineto and Nsight show them ("Memcpy HtoD").
const char* memcpyName(uint8_t copy_kind) {
  static constexpr std::array<const char*, 11> kNames = {
      "Memcpy",      "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA", "Memcpy AtoH", "Memcpy AtoA",
      "Memcpy AtoD", "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
  return copy_kind < kNames.size() ? kNames[copy_kind] : "Memcpy";
}

template <typename Record>
DeviceActivityRecord commonFields(const Record& r, CollectedKernel::Kind kind) {
  DeviceActivityRecord out;
  out.correlation_id = r.correlationId;
  out.stream = r.streamId;
  out.device = static_cast<int>(r.deviceId);
  out.start_ns = r.start;
  out.end_ns = r.end;
  out.kind = kind;
  return out;
}

}  // namespace

ActivityBuffers::ActivityBuffers() {
  for (size_t i = 0; i < kInitialActivityBuffers; ++i) {
    owned_.push_back(std::make_unique<uint8_t[]>(kActivityBufferBytes));
    free_.push_back(owned_.back().get());
  }
}

uint8_t* ActivityBuffers::acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    if (owned_.size() >= kMaxActivityBuffers) return nullptr;
    owned_.push_back(std::make_unique<uint8_t[]>(kActivityBufferBytes));
    return owned_.back().get();
  }
  uint8_t* buffer = free_.back();
  free_.pop_back();
  return buffer;
}

void ActivityBuffers::complete(uint8_t* buffer, size_t valid_bytes, size_t dropped) {
  std::lock_guard<std::mutex> lock(mutex_);
  dropped_ += dropped;
  if (buffer == nullptr) return;
  parse(buffer, valid_bytes);
  free_.push_back(buffer);
}

void ActivityBuffers::parse(uint8_t* buffer, size_t valid_bytes) {
  CUpti_Activity* record = nullptr;
  while (true) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) return;  // end of the valid records
    if (status != CUPTI_SUCCESS) {
      // Called from CUPTI's thread: cannot throw here, so keep the first
      // error for endIteration() to raise.
      if (error_.empty()) error_ = "cuptiActivityGetNextRecord failed: " + cuptiErrorText(status);
      return;
    }
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto& k = *reinterpret_cast<const KernelActivity*>(record);
        pending_.activities.push_back(commonFields(k, CollectedKernel::kKernel));
        pending_.activities.back().name = k.name ? k.name : "<unnamed kernel>";
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto& m = *reinterpret_cast<const MemcpyActivity*>(record);
        pending_.activities.push_back(commonFields(m, CollectedKernel::kMemcpy));
        pending_.activities.back().name = memcpyName(m.copyKind);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto& m = *reinterpret_cast<const MemsetActivity*>(record);
        pending_.activities.push_back(commonFields(m, CollectedKernel::kMemset));
        pending_.activities.back().name = "Memset";
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& c = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        // Only our own ids: other tools push other kinds (Kineto uses CUSTOM1).
        if (c.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
          pending_.correlations.push_back({c.externalId, c.correlationId});
        }
        break;
      }
      default:
        break;
    }
  }
}

ActivityBatch ActivityBuffers::take(uint64_t* dropped, std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  ActivityBatch out = std::move(pending_);
  pending_ = ActivityBatch{};
  if (dropped) *dropped = dropped_;
  if (error) *error = error_;
  dropped_ = 0;
  error_.clear();
  return out;
}

}  // namespace tracetwin::replay::device
