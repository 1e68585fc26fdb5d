#include "predictors/host/cache_reuse.h"

#include <algorithm>
#include <unordered_map>

namespace tracetwin::predictors {
namespace {

using Touch = StepTouch;

// Storages the ops allocate, and after which op each allocation is freed:
// the last op that touches it before the storage is produced again (an
// execution trace names storages by data pointer, so one id can be freed and
// allocated again within an iteration) or the iteration ends. As lists per
// op in one array (`frees[at[i]..at[i+1])`: produced touches): this runs for
// every op of a 100k-op graph.
struct Frees {
  std::vector<size_t> at;
  std::vector<size_t> touches;
};

Frees freesAfter(const std::vector<Touch>& touches, const std::vector<size_t>& first,
                 size_t op_count) {
  std::vector<std::pair<size_t, size_t>> ends;  // (op, produced touch)
  struct Life {
    size_t produced_touch;
    size_t last_op;
  };
  std::unordered_map<int64_t, Life> open;
  for (size_t i = 0; i < op_count; ++i) {
    for (size_t k = first[i]; k < first[i + 1]; ++k) {
      const Touch& t = touches[k];
      auto it = open.find(t.storage);
      if (t.produced) {
        if (it == open.end()) {
          open.emplace(t.storage, Life{k, i});
          continue;
        }
        if (it->second.last_op < i)
          ends.emplace_back(it->second.last_op, it->second.produced_touch);
        it->second = {k, i};
      } else if (it != open.end()) {
        it->second.last_op = i;
      }
    }
  }
  for (const auto& [storage, life] : open) ends.emplace_back(life.last_op, life.produced_touch);
  std::sort(ends.begin(), ends.end());
  Frees f;
  f.at.assign(op_count + 1, 0);
  f.touches.reserve(ends.size());
  size_t e = 0;
  for (size_t i = 0; i < op_count; ++i) {
    f.at[i] = f.touches.size();
    for (; e < ends.size() && ends[e].first == i; ++e) f.touches.push_back(ends[e].second);
  }
  f.at[op_count] = f.touches.size();
  return f;
}

}  // namespace

std::vector<ColdBytes> coldBytes(const std::vector<const core::Node*>& ops, double cache_bytes) {
  if (cache_bytes <= 0) return std::vector<ColdBytes>(ops.size());
  return coldBytes(stepTouches(ops), cache_bytes);
}

std::vector<ColdBytes> coldBytes(const StepTouches& step, double cache_bytes) {
  const size_t n_ops = step.ops();
  std::vector<ColdBytes> cold(n_ops);
  if (cache_bytes <= 0) return cold;
  const std::vector<Touch>& touches = step.touches;
  const std::vector<size_t>& first = step.first;
  const Frees frees = freesAfter(touches, first, n_ops);
  std::vector<double> last_touch(step.storages, -1.0);  // by slot: traffic clock at its last touch
  // Freed blocks by size, most recent last, each with the clock of its last
  // touch: glibc hands a freed chunk back to the next request of its size
  // (its bins and the top of the heap are last in, first out), so a tensor
  // allocated right after one of its size was freed lands on memory the
  // step just touched. embbag_wide's four 12.8 MB embedding gradients each
  // take the block of the one before, freed after the add_ that read it:
  // the first backward of a step took 871 us in the replay, the other three
  // 470-560.
  std::unordered_map<int64_t, std::vector<double>> free_blocks;
  double clock = 0;
  // Pass 0 replays the iteration once so pass 1 sees the previous one.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n_ops; ++i) {
      double bytes = 0;
      for (size_t k = first[i]; k < first[i + 1]; ++k) {
        const Touch& t = touches[k];
        double& last = last_touch[t.slot];
        // Touched already by this op (an in-place op's output, a tensor
        // passed twice): no new lines in the cache, nothing cold.
        if (last == clock) continue;
        if (t.produced) {
          auto blocks = free_blocks.find(static_cast<int64_t>(t.bytes));
          if (blocks != free_blocks.end() && !blocks->second.empty()) {
            last = blocks->second.back();
            blocks->second.pop_back();
          }
        }
        if (pass == 1 && last >= 0) {
          const double since = std::max(0.0, clock - last - t.bytes);
          const double cached = std::clamp(cache_bytes - since, 0.0, t.bytes);
          (t.input ? cold[i].inputs : cold[i].outputs) += t.bytes - cached;
          if (t.input && t.bytes > 0) cold[i].input_tensors += (t.bytes - cached) / t.bytes;
        }
        last = clock;
        bytes += t.bytes;
      }
      clock += bytes;
      for (size_t f = frees.at[i]; f < frees.at[i + 1]; ++f) {
        const Touch& t = touches[frees.touches[f]];
        free_blocks[static_cast<int64_t>(t.bytes)].push_back(last_touch[t.slot]);
      }
    }
  }
  return cold;
}

}  // namespace tracetwin::predictors
