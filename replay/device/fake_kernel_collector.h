// A KernelCollector that makes up device activity for scripted ops and runs
// it through the same attribution as the CUPTI collector, so code that
// consumes per-op kernel times (the replay loop, reports) is testable on a
// host without a GPU.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/errors.h"
#include "replay/device/kernel_attribution.h"
#include "replay/device/kernel_collector.h"

namespace tracetwin::replay::device {

class FakeKernelCollector : public KernelCollector {
 public:
  struct Launch {
    std::string name;
    int64_t stream = 7;
    uint64_t duration_ns = 1000;
    CollectedKernel::Kind kind = CollectedKernel::kKernel;
  };

  // What pushing `op` launches. Ops without a script launch nothing.
  void script(uint64_t op, std::vector<Launch> launches) { scripts_[op] = std::move(launches); }
  // Simulated host time between two pushOp() calls: a launch starts when
  // both its stream is free and the host has reached it.
  void setHostGapNs(uint64_t ns) { host_gap_ns_ = ns; }

  void beginIteration() override {
    if (!open_.empty()) throw UsageError("FakeKernelCollector: beginIteration() with ops pushed");
    batch_ = ActivityBatch{};
    parents_.clear();
    stream_free_.clear();
    host_ns_ = 0;
  }

  void pushOp(uint64_t op) override {
    if (!open_.empty()) parents_[op] = open_.back();
    open_.push_back(op);
    host_ns_ += host_gap_ns_;
    auto it = scripts_.find(op);
    if (it == scripts_.end()) return;
    for (const Launch& l : it->second) {
      const uint32_t correlation = ++next_correlation_;
      batch_.correlations.push_back({op, correlation});
      uint64_t& free_at = stream_free_[l.stream];
      const uint64_t start = std::max(free_at, host_ns_);
      free_at = start + l.duration_ns;
      batch_.activities.push_back({correlation, l.name, l.stream, 0, start, free_at, l.kind});
    }
  }

  void popOp() override {
    if (open_.empty()) throw UsageError("FakeKernelCollector: popOp() without pushOp()");
    open_.pop_back();
  }

  std::vector<CollectedKernel> endIteration() override {
    if (!open_.empty()) throw UsageError("FakeKernelCollector: endIteration() with ops pushed");
    return attributeActivities(batch_);
  }

  const std::unordered_map<uint64_t, uint64_t>& opParents() const override { return parents_; }
  uint64_t droppedRecords() const override { return 0; }

 private:
  std::map<uint64_t, std::vector<Launch>> scripts_;
  uint64_t host_gap_ns_ = 0;
  ActivityBatch batch_;
  std::unordered_map<uint64_t, uint64_t> parents_;
  std::vector<uint64_t> open_;
  std::map<int64_t, uint64_t> stream_free_;
  uint64_t host_ns_ = 0;
  uint32_t next_correlation_ = 0;
};

}  // namespace tracetwin::replay::device
