// Timestamps on the timeline a replay's work runs on, relative to an origin:
// the host's clock on a CPU, CUDA events on a GPU (where calls return before
// their kernels ran). A distributed replay marks each collective's arrival
// and completion with one, per rank. Torch-free.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace tracetwin::replay::device {

class MarkClock {
 public:
  virtual ~MarkClock() = default;
  // Starts a new set of marks; later marks are relative to this moment.
  virtual void origin() = 0;
  // Records a mark now (on the device's stream for CUDA); returns its index.
  virtual size_t mark() = 0;
  // The marks since origin(), in microseconds from it, in order. Waits for
  // the device to reach the last one.
  virtual std::vector<double> resolveUs() = 0;
};

std::unique_ptr<MarkClock> makeSteadyMarkClock();
// Events on `stream` (a cudaStream_t; nullptr = the legacy default stream,
// which LibTorch's current stream is unless a replay switched streams) of
// device `device`. Throws UnavailableError like requireCudaDevice().
std::unique_ptr<MarkClock> makeCudaEventMarkClock(int device, void* stream = nullptr);

}  // namespace tracetwin::replay::device
