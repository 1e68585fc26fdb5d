#include "replay/cpu_time.h"

#include <ctime>

namespace tracetwin::replay {

double processCpuMs() {
#if defined(CLOCK_PROCESS_CPUTIME_ID)
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
#endif
  return -1.0;
}

}  // namespace tracetwin::replay
