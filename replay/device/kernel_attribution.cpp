#include "replay/device/kernel_attribution.h"

#include "core/intervals.h"

#include <algorithm>
#include <tuple>

namespace tracetwin::replay::device {

const char* kindName(CollectedKernel::Kind kind) {
  switch (kind) {
    case CollectedKernel::kKernel:
      return "kernel";
    case CollectedKernel::kMemcpy:
      return "memcpy";
    case CollectedKernel::kMemset:
      return "memset";
  }
  return "unknown";
}

namespace {

std::unordered_map<uint32_t, uint64_t> correlationToOp(const ActivityBatch& batch,
                                                       AttributionCounts& counts) {
  std::unordered_map<uint32_t, uint64_t> to_op;
  to_op.reserve(batch.correlations.size());
  for (const ExternalCorrelationRecord& r : batch.correlations) {
    auto [it, inserted] = to_op.emplace(r.correlation_id, r.external_id);
    if (!inserted && it->second != r.external_id) ++counts.conflicting_correlations;
  }
  return to_op;
}

bool startsBefore(const CollectedKernel& a, const CollectedKernel& b) {
  return std::tie(a.start_ns, a.end_ns, a.stream) < std::tie(b.start_ns, b.end_ns, b.stream);
}

}  // namespace

std::vector<CollectedKernel> attributeActivities(const ActivityBatch& batch,
                                                 AttributionCounts* counts_out) {
  AttributionCounts counts;
  const auto to_op = correlationToOp(batch, counts);
  std::vector<CollectedKernel> kernels;
  kernels.reserve(batch.activities.size());
  for (const DeviceActivityRecord& r : batch.activities) {
    if (r.end_ns < r.start_ns) {
      ++counts.malformed;
      continue;
    }
    CollectedKernel k;
    k.name = r.name;
    k.stream = r.stream;
    k.device = r.device;
    k.start_ns = r.start_ns;
    k.end_ns = r.end_ns;
    k.kind = r.kind;
    auto it = to_op.find(r.correlation_id);
    if (it != to_op.end()) {
      k.op_correlation = it->second;
      ++counts.attributed;
    } else {
      ++counts.unattributed;
    }
    kernels.push_back(std::move(k));
  }
  std::stable_sort(kernels.begin(), kernels.end(), startsBefore);
  if (counts_out) *counts_out = counts;
  return kernels;
}

namespace {

using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;

struct OpAccumulator {
  OpDeviceTime time;
  Intervals own;
  Intervals inclusive;
  uint64_t inclusive_sum = 0;
  bool has_own = false;
};

void addOwn(OpAccumulator& acc, const CollectedKernel& k) {
  OpDeviceTime& t = acc.time;
  if (k.kind == CollectedKernel::kKernel) ++t.kernels;
  if (k.kind == CollectedKernel::kMemcpy) ++t.memcpys;
  if (k.kind == CollectedKernel::kMemset) ++t.memsets;
  t.sum_ns += k.durationNs();
  t.first_start_ns = acc.has_own ? std::min(t.first_start_ns, k.start_ns) : k.start_ns;
  t.last_end_ns = std::max(t.last_end_ns, k.end_ns);
  acc.has_own = true;
  acc.own.emplace_back(k.start_ns, k.end_ns);
}

// The op and its enclosing ops, each once: a cyclic map (a collector bug)
// can neither hang the walk nor count a kernel twice.
std::vector<uint64_t> opAndAncestors(uint64_t op,
                                     const std::unordered_map<uint64_t, uint64_t>& parents) {
  std::vector<uint64_t> chain{op};
  for (size_t step = 0; step < parents.size(); ++step) {
    auto it = parents.find(chain.back());
    if (it == parents.end()) break;
    if (std::find(chain.begin(), chain.end(), it->second) != chain.end()) break;  // cycle
    chain.push_back(it->second);
  }
  return chain;
}

}  // namespace

IterationDeviceTime summarizeDeviceTime(const std::vector<CollectedKernel>& kernels,
                                        const std::unordered_map<uint64_t, uint64_t>& parents) {
  IterationDeviceTime out;
  std::unordered_map<uint64_t, OpAccumulator> ops;
  std::vector<uint64_t> order;  // first-activity order
  Intervals all, attributed;
  uint64_t first = 0, last = 0;
  for (const CollectedKernel& k : kernels) {
    first = all.empty() ? k.start_ns : std::min(first, k.start_ns);
    last = std::max(last, k.end_ns);
    all.emplace_back(k.start_ns, k.end_ns);
    out.busy_sum_ns += k.durationNs();
    if (k.op_correlation == kUnattributed) {
      ++out.unattributed_records;
      continue;
    }
    attributed.emplace_back(k.start_ns, k.end_ns);
    for (uint64_t op : opAndAncestors(k.op_correlation, parents)) {
      auto [it, inserted] = ops.try_emplace(op);
      if (inserted) {
        it->second.time.op = op;
        order.push_back(op);
      }
      if (op == k.op_correlation) addOwn(it->second, k);
      it->second.inclusive.emplace_back(k.start_ns, k.end_ns);
      it->second.inclusive_sum += k.durationNs();
    }
  }
  out.busy_union_ns = core::unionLength(std::move(all));
  out.attributed_union_ns = core::unionLength(std::move(attributed));
  out.span_ns = kernels.empty() ? 0 : last - first;
  out.covered_share = out.busy_union_ns == 0
                          ? 1.0
                          : static_cast<double>(out.attributed_union_ns) / out.busy_union_ns;
  for (uint64_t op : order) {
    OpAccumulator& acc = ops.at(op);
    acc.time.union_ns = core::unionLength(std::move(acc.own));
    acc.time.inclusive_union_ns = core::unionLength(std::move(acc.inclusive));
    acc.time.inclusive_sum_ns = acc.inclusive_sum;
    out.per_op.push_back(acc.time);
  }
  return out;
}

}  // namespace tracetwin::replay::device
