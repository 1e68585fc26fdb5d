#include "predictors/simulation/distinct_ops.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>

#include "predictors/kernels/features.h"

namespace tracetwin::predictors {
namespace {

uint64_t bitsOf(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

}  // namespace

// What the op does, whatever came before it: name, dtype, sizes and the
// family's shape features.
uint64_t shapeHash(const OpFeatures& f) {
  uint64_t h = std::hash<std::string>{}(variantKey(f));
  auto mixIn = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; };
  mixIn(static_cast<uint64_t>(f.dtype));
  mixIn(bitsOf(f.flops));
  mixIn(bitsOf(f.bytes));
  for (float x : f.x) mixIn(bitsOf(static_cast<double>(x)));
  return h;
}

namespace {

// Ops of one iteration repeat a few hundred distinct shapes (every layer of
// every micro-batch), so each family predicts its distinct feature sets
// only: the shape hash and what else the models read.
uint64_t featureHash(const OpRecord& r) {
  const OpFeatures& f = r.f;
  uint64_t h = r.shape_hash;
  auto mixIn = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; };
  mixIn(f.repeated ? 1 : 0);
  mixIn(bitsOf(f.cold_bytes));
  if (f.reuse_bytes >= 0) mixIn(bitsOf(static_cast<double>(reuseColumnValue(f))));
  mixIn(bitsOf(f.message_bytes));
  mixIn(static_cast<uint64_t>(f.world_size));
  mixIn(bitsOf(f.table_bytes));
  mixIn(bitsOf(f.unique_fraction));
  return h;
}

bool sameFeatures(const OpFeatures& a, const OpFeatures& b) {
  return a.op == b.op && a.variant == b.variant && a.repeated == b.repeated &&
         sameReuseColumn(a, b) && a.cold_bytes == b.cold_bytes && a.dtype == b.dtype &&
         a.flops == b.flops && a.bytes == b.bytes && a.x == b.x && a.collective == b.collective &&
         a.world_size == b.world_size && a.message_bytes == b.message_bytes &&
         a.table_bytes == b.table_bytes && a.gathered_bytes == b.gathered_bytes &&
         a.unique_fraction == b.unique_fraction;
}

}  // namespace

std::vector<uint32_t> featureIds(const std::vector<OpRecord>& recs) {
  std::vector<uint32_t> ids(recs.size());
  std::unordered_map<uint64_t, uint32_t> first;  // featureHash -> its first feature set's number
  struct Set {
    size_t rec;     // its first record
    uint32_t next;  // the next set with the same hash (a collision), 0: none
  };
  std::vector<Set> sets;  // number - 1 -> set
  for (size_t i = 0; i < recs.size(); ++i) {
    uint32_t& head = first[featureHash(recs[i])];
    uint32_t last = 0;
    for (uint32_t n = head; n != 0 && ids[i] == 0; n = sets[n - 1].next) {
      if (sameFeatures(recs[sets[n - 1].rec].f, recs[i].f)) ids[i] = n;
      last = n;
    }
    if (ids[i] != 0) continue;
    sets.push_back({i, 0});
    ids[i] = static_cast<uint32_t>(sets.size());
    (last == 0 ? head : sets[last - 1].next) = ids[i];
  }
  return ids;
}

// The distinct feature sets among `idx` (ops of one family).
DistinctOps distinctOps(const std::vector<OpRecord>& recs, const std::vector<size_t>& idx,
                        const std::vector<uint32_t>& ids) {
  DistinctOps d;
  // Feature set number -> index into `features`. The numbers count from 1
  // up to the sets of the step: a vector indexed by them, not a hash map.
  constexpr size_t kNone = SIZE_MAX;
  uint32_t largest = 0;
  for (size_t i : idx) largest = std::max(largest, ids[i]);
  std::vector<size_t> slot_of(size_t{largest} + 1, kNone);
  d.slot.resize(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    size_t& slot = slot_of[ids[idx[k]]];
    if (slot == kNone) {
      slot = d.features.size();
      d.features.push_back(&recs[idx[k]].f);
    }
    d.slot[k] = slot;
  }
  return d;
}

// Predicts the ops of `d` with `model`, once per distinct feature set.
std::vector<double> predictDistinct(const KernelModel& model, const DeviceSpec& spec,
                                    const DistinctOps& d) {
  std::vector<double> distinct_us;
  model.predictBatch(d.features, spec, &distinct_us);
  std::vector<double> us(d.slot.size());
  for (size_t k = 0; k < d.slot.size(); ++k) us[k] = distinct_us[d.slot[k]];
  return us;
}

}  // namespace tracetwin::predictors
