#include "predictors/host/step_positions.h"

#include <unordered_set>

#include "core/kineto/step_position_keys.h"

namespace tracetwin::predictors {

std::vector<const char*> stepPositionKeys(const std::vector<OpRecord>& recs) {
  std::vector<const char*> keys(recs.size(), nullptr);
  std::unordered_set<int64_t> seen;
  for (size_t i = 0; i < recs.size(); ++i) {
    const int64_t tid = recs[i].node->tid;
    const bool new_thread = seen.insert(tid).second;
    if (i == 0) {
      keys[i] = core::kineto::kStepStartKey;
    } else if (recs[i - 1].node->tid != tid) {
      keys[i] = new_thread ? core::kineto::kThreadEntryKey : core::kineto::kThreadReturnKey;
    }
  }
  return keys;
}

}  // namespace tracetwin::predictors
