// Checked CUPTI calls: TRACETWIN_CUPTI_CALL(cuptiFoo(...)) throws with the
// call as written and CUPTI's own error text. Include only from sources
// compiled with CUPTI.
#pragma once

#include <cupti.h>

#include <string>

#include "core/errors.h"

namespace tracetwin::replay::device {

inline std::string cuptiErrorText(CUptiResult status) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(status));
  }
  return text;
}

// Results that mean "this host cannot profile" (no device, another profiler
// holds CUPTI, counters restricted to admins) are UnavailableError (exit 3);
// the rest are RuntimeFailure (exit 4).
[[noreturn]] inline void throwCuptiError(CUptiResult status, const char* call, const char* file,
                                         int line) {
  std::string msg = std::string(call) + " failed: " + cuptiErrorText(status) + " at " + file + ":" +
                    std::to_string(line);
  switch (status) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      throw UnavailableError(msg +
                             " (GPU profiling is restricted to admin users on this host; "
                             "see NVIDIA's ERR_NVGPUCTRPERM, or replay with --no-cupti)");
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      throw UnavailableError(msg + " (another profiler, e.g. Nsight or Kineto, holds CUPTI)");
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_NOT_INITIALIZED:
      throw UnavailableError(msg);
    default:
      throw RuntimeFailure(msg);
  }
}

}  // namespace tracetwin::replay::device

#define TRACETWIN_CUPTI_CALL(call)                                                         \
  do {                                                                                     \
    const CUptiResult tt_status_ = (call);                                                 \
    if (tt_status_ != CUPTI_SUCCESS)                                                       \
      ::tracetwin::replay::device::throwCuptiError(tt_status_, #call, __FILE__, __LINE__); \
  } while (0)
