// Activity buffers handed to CUPTI and the records parsed out of them
// (compiled only with CUPTI). CUPTI calls back from its own thread with C
// function pointers, so the state they reach is one process-wide object.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "replay/device/kernel_attribution.h"

namespace tracetwin::replay::device {

// 8 MiB per buffer: CUPTI's documentation recommends 1 to 10 MB. One launch
// costs a kernel record (CUpti_ActivityKernel10, 216 bytes), an API record
// (40) and an external-correlation record (24), so one buffer holds ~29,000
// launches, far more than one iteration of the sample ResNet trace (1,237
// ops) makes; while CUPTI fills one buffer the other is being parsed, hence
// two to start with (double buffering).
inline constexpr size_t kActivityBufferBytes = size_t{8} << 20;
inline constexpr size_t kInitialActivityBuffers = 2;
// Beyond 16 buffers (128 MiB) CUPTI is given none and drops records; the
// drop is counted and reported, never hidden.
inline constexpr size_t kMaxActivityBuffers = 16;

class ActivityBuffers {
 public:
  ActivityBuffers();
  // For CUPTI's buffer-requested callback: a free buffer, or nullptr when
  // kMaxActivityBuffers are all in CUPTI's hands.
  uint8_t* acquire();
  // Parses the valid bytes of a completed buffer into the pending batch and
  // returns the buffer to the pool.
  void complete(uint8_t* buffer, size_t valid_bytes, size_t dropped);
  // The records completed since the last take, and the error (if any) met
  // while parsing them.
  ActivityBatch take(uint64_t* dropped, std::string* error);

 private:
  void parse(uint8_t* buffer, size_t valid_bytes);

  std::mutex mutex_;
  std::vector<std::unique_ptr<uint8_t[]>> owned_;
  std::vector<uint8_t*> free_;
  ActivityBatch pending_;
  uint64_t dropped_ = 0;
  std::string error_;
};

}  // namespace tracetwin::replay::device
