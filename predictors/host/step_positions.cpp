#include "predictors/host/step_positions.h"

#include <unordered_set>

#include "core/kineto/step_position_keys.h"

namespace tracetwin::predictors {

std::vector<const char*> stepPositionKeys(const std::vector<OpRecord>& recs) {
  std::vector<const char*> keys(recs.size(), nullptr);
  std::unordered_set<int64_t> seen;
  for (size_t i = 0; i < recs.size(); ++i) {
    const int64_t tid = recs[i].node->tid;
    if (i == 0) {
      keys[i] = core::kineto::kStepStartKey;
      seen.insert(tid);
    } else if (recs[i - 1].node->tid != tid) {  // a hand-over: a few per step
      keys[i] =
          seen.insert(tid).second ? core::kineto::kThreadEntryKey : core::kineto::kThreadReturnKey;
    }
  }
  return keys;
}

}  // namespace tracetwin::predictors
