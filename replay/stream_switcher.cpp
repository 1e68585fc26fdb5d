#include "replay/stream_switcher.h"

#include <fmt/core.h>

#include "core/errors.h"

namespace tracetwin::replay {

StreamSwitcher::StreamSwitcher(const StreamPlan& plan, c10::Device device)
    : plan_(plan), impl_(nullptr) {
  if (device.is_cpu() || !c10::impl::hasDeviceGuardImpl(device.type())) {
    throw RuntimeFailure(fmt::format("streams: device {} has no streams", device.str()));
  }
  impl_ = c10::impl::getDeviceGuardImpl(device.type());
  streams_.push_back(impl_->getStream(device));
  for (int r = 1; r < plan.streams(); ++r)
    streams_.push_back(impl_->getStreamFromGlobalPool(device));
  op_events_.resize(plan.record_event.size());
  for (size_t i = 0; i < plan.record_event.size(); ++i) {
    if (plan.record_event[i]) op_events_[i].emplace(device.type());
  }
  for (int r = 0; r < plan.streams(); ++r) join_events_.emplace_back(device.type());
}

StreamSwitcher::~StreamSwitcher() {
  if (current_ != 0) impl_->exchangeStream(streams_[0]);
}

void StreamSwitcher::beginIteration() {
  join_events_[0].record(streams_[0]);
  for (size_t r = 1; r < streams_.size(); ++r) join_events_[0].block(streams_[r]);
}

void StreamSwitcher::beforeOp(int64_t op, SlotTable& slots) {
  const auto i = static_cast<size_t>(op);
  const int stream = plan_.op_stream[i];
  for (int64_t producer : plan_.waits[i]) {
    const auto& event = op_events_[static_cast<size_t>(producer)];
    if (event && event->was_marked_for_recording()) event->block(streams_[size_t(stream)]);
  }
  for (int32_t slot : plan_.cross_stream_inputs[i]) {
    const at::Tensor& t = slots.get(slot);
    if (t.defined() && t.has_storage())
      impl_->recordDataPtrOnStream(t.storage().data_ptr(), streams_[size_t(stream)]);
  }
  if (stream != current_) {
    impl_->exchangeStream(streams_[size_t(stream)]);
    current_ = stream;
  }
}

void StreamSwitcher::afterOp(int64_t op) {
  const auto i = static_cast<size_t>(op);
  if (op_events_[i]) op_events_[i]->record(streams_[size_t(current_)]);
  if (current_ != 0) {
    impl_->exchangeStream(streams_[0]);
    current_ = 0;
  }
}

void StreamSwitcher::endIteration() {
  for (size_t r = 1; r < streams_.size(); ++r) {
    join_events_[r].record(streams_[r]);
    join_events_[r].block(streams_[0]);
  }
}

}  // namespace tracetwin::replay
