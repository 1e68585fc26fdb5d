// Per-op device activity (kernels, memcpys, memsets) collected during one
// replayed iteration. Torch-free and CUDA-free: the CUPTI implementation sits
// behind this interface so CPU-only tests can feed fakes (DESIGN.md "Timing").
#pragma once

#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tracetwin::replay::device {

// Op correlation of activity launched outside any pushed op (CUPTI emits no
// external-correlation record for it). 0 is a valid op id, so the sentinel is
// the largest value.
inline constexpr uint64_t kUnattributed = std::numeric_limits<uint64_t>::max();

struct CollectedKernel {
  enum Kind : uint8_t { kKernel, kMemcpy, kMemset };

  uint64_t op_correlation = kUnattributed;  // the innermost op pushed at launch
  std::string name;                         // kernel name, or "Memcpy HtoD" ...
  int64_t stream = 0;
  int device = 0;
  uint64_t start_ns = 0;  // device timestamps (CUPTI clock, ns)
  uint64_t end_ns = 0;
  Kind kind = kKernel;

  uint64_t durationNs() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};

const char* kindName(CollectedKernel::Kind kind);  // "kernel", "memcpy", "memset"

class KernelCollector {
 public:
  virtual ~KernelCollector() = default;

  // Starts a new iteration: forgets what the previous one collected.
  virtual void beginIteration() = 0;
  // Everything launched between pushOp(id) and the matching popOp() is
  // attributed to `op_correlation` (the innermost op when nested).
  virtual void pushOp(uint64_t op_correlation) = 0;
  virtual void popOp() = 0;
  // Waits for the device, flushes the records (call it after the iteration's
  // timer stopped: flushing is not part of the measured time) and returns the
  // activity in start order.
  virtual std::vector<CollectedKernel> endIteration() = 0;

  // op -> enclosing op for ops pushed while another was open, in the
  // iteration endIteration() last returned (for inclusive per-op times).
  virtual const std::unordered_map<uint64_t, uint64_t>& opParents() const = 0;
  // Records CUPTI dropped in that iteration because its buffers were full.
  virtual uint64_t droppedRecords() const = 0;
};

// Pushes an op for the lifetime of the guard, so an exception in the op
// still pops it.
class ScopedOp {
 public:
  ScopedOp(KernelCollector& collector, uint64_t op_correlation)
      : collector_(collector), exceptions_at_entry_(std::uncaught_exceptions()) {
    collector_.pushOp(op_correlation);
  }
  // A failing pop is reported, except while the op's own exception unwinds:
  // that one says what went wrong, and a second would terminate the process.
  ~ScopedOp() noexcept(false) {
    if (std::uncaught_exceptions() > exceptions_at_entry_) {
      try {
        collector_.popOp();
      } catch (...) {  // NOLINT(bugprone-empty-catch): see above
      }
      return;
    }
    collector_.popOp();
  }
  ScopedOp(const ScopedOp&) = delete;
  ScopedOp& operator=(const ScopedOp&) = delete;

 private:
  KernelCollector& collector_;
  int exceptions_at_entry_;
};

// True when this build has CUPTI (TRACETWIN_HAVE_CUPTI).
bool cuptiCompiledIn();

// A collector on CUDA device `device` using the CUPTI Activity API. Throws
// UnavailableError naming the reason when it cannot run: "not compiled with
// CUPTI", or "no CUDA device: cudaGetDeviceCount returned ...", or CUPTI
// refusing (another profiler attached, insufficient privileges). Only one can
// exist at a time (CUPTI activity callbacks are process-wide): a second one
// throws RuntimeFailure.
std::unique_ptr<KernelCollector> makeCuptiCollector(int device = 0);

}  // namespace tracetwin::replay::device
