// KernelCollector over the CUPTI Activity API (compiled only with CUPTI;
// cupti_collector_unavailable.cpp stands in without it).
#include <cupti.h>

#include <atomic>

#include "core/errors.h"
#include "replay/device/cuda_check.h"
#include "replay/device/cupti_activity_buffers.h"
#include "replay/device/cupti_check.h"
#include "replay/device/device_timer.h"
#include "replay/device/kernel_attribution.h"
#include "replay/device/kernel_collector.h"

namespace tracetwin::replay::device {

bool cuptiCompiledIn() { return true; }

namespace {

// CUPTI's buffer callbacks are plain C functions with no user pointer, so
// they reach the live collector's buffers through this one pointer.
std::atomic<ActivityBuffers*> g_buffers{nullptr};

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  ActivityBuffers* buffers = g_buffers.load();
  *buffer = buffers ? buffers->acquire() : nullptr;
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI onBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                size_t /*size*/, size_t valid_bytes) {
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped);
  if (ActivityBuffers* buffers = g_buffers.load()) buffers->complete(buffer, valid_bytes, dropped);
}

// Kernels are recorded as CONCURRENT_KERNEL, not KERNEL: the latter makes
// CUDA serialise kernels and would change what we measure. RUNTIME and DRIVER
// are on although their records are skipped: CUPTI writes an
// external-correlation record only ahead of an API record, so without them
// no kernel could be tied to its op (DRIVER for launches that bypass the
// runtime: NCCL, Triton, cuBLAS's cuLaunchKernel paths).
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER};

// The activity subscription: callbacks registered and kinds enabled for its
// lifetime; the destructor disables them and flushes what is left.
class ActivitySession {
 public:
  explicit ActivitySession(ActivityBuffers& buffers) {
    ActivityBuffers* expected = nullptr;
    if (!g_buffers.compare_exchange_strong(expected, &buffers)) {
      throw RuntimeFailure(
          "a CUPTI kernel collector already exists in this process; "
          "CUPTI activity collection is process-wide, use one at a time");
    }
    try {
      TRACETWIN_CUPTI_CALL(cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted));
      for (CUpti_ActivityKind kind : kKinds) {
        TRACETWIN_CUPTI_CALL(cuptiActivityEnable(kind));
        enabled_.push_back(kind);
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~ActivitySession() { release(); }
  ActivitySession(const ActivitySession&) = delete;
  ActivitySession& operator=(const ActivitySession&) = delete;

 private:
  void release() noexcept {
    for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) cuptiActivityDisable(*it);
    enabled_.clear();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    g_buffers.store(nullptr);
  }

  std::vector<CUpti_ActivityKind> enabled_;
};

class CuptiCollector final : public KernelCollector {
 public:
  explicit CuptiCollector(int device) : device_(device), session_(buffers_) {}

  void beginIteration() override {
    if (!open_ops_.empty())
      throw UsageError("CUPTI collector: beginIteration() with ops still pushed");
    parents_.clear();
    // Activity from before this iteration (warm-up, tensor set-up) is not ours.
    flush();
    buffers_.take(nullptr, nullptr);
  }

  void pushOp(uint64_t op) override {
    TRACETWIN_CUPTI_CALL(
        cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, op));
    if (!open_ops_.empty()) parents_[op] = open_ops_.back();
    open_ops_.push_back(op);
  }

  void popOp() override {
    if (open_ops_.empty()) throw UsageError("CUPTI collector: popOp() without pushOp()");
    uint64_t last = 0;
    open_ops_.pop_back();
    TRACETWIN_CUPTI_CALL(
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last));
  }

  std::vector<CollectedKernel> endIteration() override {
    flush();
    std::string error;
    ActivityBatch batch = buffers_.take(&dropped_, &error);
    if (!error.empty()) throw RuntimeFailure("CUPTI collector: " + error);
    return attributeActivities(batch);
  }

  const std::unordered_map<uint64_t, uint64_t>& opParents() const override { return parents_; }
  uint64_t droppedRecords() const override { return dropped_; }

 private:
  // Records reach the buffers only once the work has finished on the device
  // and CUPTI has handed the buffer back: wait for both.
  void flush() {
    CudaDeviceGuard guard(device_);
    TRACETWIN_CUDA_CALL(cudaDeviceSynchronize());
    TRACETWIN_CUPTI_CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  }

  int device_;
  ActivityBuffers buffers_;
  ActivitySession session_;  // after buffers_: unsubscribes before they go
  std::vector<uint64_t> open_ops_;
  std::unordered_map<uint64_t, uint64_t> parents_;
  uint64_t dropped_ = 0;
};

}  // namespace

std::unique_ptr<KernelCollector> makeCuptiCollector(int device) {
  requireCudaDevice(device);
  return std::make_unique<CuptiCollector>(device);
}

}  // namespace tracetwin::replay::device
