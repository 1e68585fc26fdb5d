// Time the profiler itself stopped a thread: Kineto's "overhead" events
// (CUPTI's "Activity Buffer Request" and the like). The unprofiled step has
// none of it, and it is not spread evenly: every stored H100 capture has two
// buffer requests of 0.3-2.9 ms (2.3-5.7 ms a step), each inside one op or
// gap (DLRM's first linear waited 2.5 of its 3.0 ms before its launch), so a
// per-record correction cannot take it off; it is cut out of the very
// samples it fell in.
#pragma once

#include <utility>
#include <vector>

#include "core/kineto/kineto_trace.h"

namespace tracetwin::core::kineto {

class ProfilerStalls {
 public:
  explicit ProfilerStalls(const KinetoTrace& trace);

  // Microseconds of stalls inside [from, to).
  double within(double from, double to) const;
  bool empty() const { return spans_.empty(); }
  double total() const { return done_.empty() ? 0.0 : done_.back(); }

 private:
  std::vector<std::pair<double, double>> spans_;  // merged (start, end), by start
  std::vector<double> done_;                      // stall time up to each span's end
};

}  // namespace tracetwin::core::kineto
