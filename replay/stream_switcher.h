// Carries out a StreamPlan on a device with streams (CUDA): one pool stream
// per extra recorded stream, an event after every op that a later op on
// another stream waits for, and joins at the iteration's ends so the timer,
// which runs on the main stream, covers the side streams too. Written against
// c10's device-generic stream and event interface, so it builds without the
// CUDA LibTorch; it runs wherever one is loaded. Replay-private.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <optional>
#include <vector>

#include "replay/slot_table.h"
#include "replay/stream_plan.h"

namespace tracetwin::replay {

class StreamSwitcher {
 public:
  // Throws RuntimeFailure when the device type has no streams (CPU).
  StreamSwitcher(const StreamPlan& plan, c10::Device device);
  ~StreamSwitcher();  // the main stream is current again
  StreamSwitcher(const StreamSwitcher&) = delete;
  StreamSwitcher& operator=(const StreamSwitcher&) = delete;

  // Side streams wait for what the main stream queued before (upfront refills).
  void beginIteration();
  // Waits for the op's cross-stream producers, keeps the allocator from
  // reusing their memory early, and makes the op's stream current.
  void beforeOp(int64_t op, SlotTable& slots);
  // Records the op's event when a later op waits for it; the main stream is
  // current again.
  void afterOp(int64_t op);
  // The main stream waits for every side stream.
  void endIteration();

 private:
  const StreamPlan& plan_;
  const c10::impl::DeviceGuardImplInterface* impl_;
  std::vector<c10::Stream> streams_;                  // [0] the current stream at construction
  std::vector<std::optional<c10::Event>> op_events_;  // per op with record_event
  std::vector<c10::Event> join_events_;               // per stream
  int current_ = 0;
};

}  // namespace tracetwin::replay
