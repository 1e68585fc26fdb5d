#include "replay/page_faults.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

namespace tracetwin::replay {

int64_t minorPageFaults() {
#if defined(__unix__) || defined(__APPLE__)
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) == 0) return static_cast<int64_t>(usage.ru_minflt);
#endif
  return -1;
}

}  // namespace tracetwin::replay
