// Which stream each replayed op runs on, from the streams its kernels ran on
// in the original run (a linked Kineto trace: the ET records no streams), and
// the events that keep cross-stream dependencies. Torch-free, so the plan is
// unit-tested here; replay/stream_switcher.h carries it out on a device.
//
// DLRM's rank 0 (../shared/traces/dlrm_8rank) ran its compute on stream 7,
// the host-to-device copies of the next batch (aten::to) on streams 22 and
// 24, and its collectives on 84: replayed on one stream, those copies would
// queue behind the compute they overlapped with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tracetwin::replay {

inline constexpr int64_t kNoRecordedStream = -1;

struct StreamPlan {
  // Replay stream r ran as recorded stream recorded[r]. Replay stream 0 is
  // the device's current stream (the recorded one with the most ops).
  std::vector<int64_t> recorded;
  std::vector<int> op_stream;  // per op index
  // Per op: producers on other streams whose results it reads, at most one
  // per stream (the latest: a stream runs in order).
  std::vector<std::vector<int64_t>> waits;
  std::vector<uint8_t> record_event;  // per op: a later op waits for it
  // Per op: input slots produced on another stream. The caching allocator
  // must not hand their memory out again before this op's stream is done.
  std::vector<std::vector<int32_t>> cross_stream_inputs;
  int64_t cross_stream_waits = 0;  // total over ops

  int streams() const { return recorded.empty() ? 1 : static_cast<int>(recorded.size()); }
  bool multiStream() const { return streams() > 1; }
};

// `recorded_stream[i]`: the stream op i's first kernel ran on, or
// kNoRecordedStream (no kernel, or not linked): such an op stays on the
// stream of the op before it. `op_inputs[i]`: the tensor slots op i reads;
// `slot_def_op[s]`: the op that produces slot s, -1 for inputs made before
// the replay (they are ready on every stream).
StreamPlan planStreams(const std::vector<int64_t>& recorded_stream,
                       const std::vector<std::vector<int32_t>>& op_inputs,
                       const std::vector<int64_t>& slot_def_op);

}  // namespace tracetwin::replay
