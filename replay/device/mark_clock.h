// Timestamps on a GPU's timeline, relative to an origin: CUDA events, since
// calls return before their kernels ran (on a CPU the host's clock is the
// timeline). A distributed replay on CUDA marks each collective's arrival
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

// Events on `stream` (a cudaStream_t; nullptr = the legacy default stream,
// which LibTorch's current stream is unless a replay switched streams) of
// device `device`. Throws UnavailableError like requireCudaDevice().
std::unique_ptr<MarkClock> makeCudaEventMarkClock(int device, void* stream = nullptr);

}  // namespace tracetwin::replay::device
