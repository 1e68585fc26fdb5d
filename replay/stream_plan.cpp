#include "replay/stream_plan.h"

#include <algorithm>
#include <map>

namespace tracetwin::replay {

StreamPlan planStreams(const std::vector<int64_t>& recorded_stream,
                       const std::vector<std::vector<int32_t>>& op_inputs,
                       const std::vector<int64_t>& slot_def_op) {
  StreamPlan plan;
  const size_t n = recorded_stream.size();
  plan.op_stream.assign(n, 0);
  plan.waits.assign(n, {});
  plan.record_event.assign(n, 0);
  plan.cross_stream_inputs.assign(n, {});

  // The busiest recorded stream becomes replay stream 0, the others follow
  // in order of first use.
  std::map<int64_t, int64_t> ops_per_stream;
  std::vector<int64_t> first_use;
  for (int64_t s : recorded_stream) {
    if (s == kNoRecordedStream) continue;
    if (ops_per_stream[s]++ == 0) first_use.push_back(s);
  }
  if (first_use.size() < 2) return plan;  // one stream (or none known): nothing to plan
  const int64_t main_stream =
      std::max_element(ops_per_stream.begin(), ops_per_stream.end(), [](auto& a, auto& b) {
        return a.second < b.second;
      })->first;
  plan.recorded.push_back(main_stream);
  for (int64_t s : first_use) {
    if (s != main_stream) plan.recorded.push_back(s);
  }
  std::map<int64_t, int> replay_index;
  for (size_t r = 0; r < plan.recorded.size(); ++r) replay_index[plan.recorded[r]] = int(r);

  int current = 0;
  for (size_t i = 0; i < n; ++i) {
    if (recorded_stream[i] != kNoRecordedStream) current = replay_index[recorded_stream[i]];
    plan.op_stream[i] = current;
  }
  for (size_t i = 0; i < n; ++i) {
    std::map<int, int64_t> latest;  // other stream -> its latest producer read here
    for (int32_t slot : op_inputs[i]) {
      if (slot < 0 || size_t(slot) >= slot_def_op.size()) continue;
      const int64_t producer = slot_def_op[size_t(slot)];
      if (producer < 0 || size_t(producer) >= i)
        continue;  // made before the replay, or by i itself
      const int other = plan.op_stream[size_t(producer)];
      if (other == plan.op_stream[i]) continue;
      auto& p = latest[other];
      p = std::max(p, producer);
      plan.cross_stream_inputs[i].push_back(slot);
    }
    for (const auto& [stream, producer] : latest) {
      plan.waits[i].push_back(producer);
      plan.record_event[size_t(producer)] = 1;
      ++plan.cross_stream_waits;
    }
  }
  return plan;
}

}  // namespace tracetwin::replay
