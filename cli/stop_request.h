// Ctrl-C as a request to stop at the next safe point, for the commands that
// measure (replay, calibrate): the work polls the flag between ops or
// points, so what was measured can still be reported (replay) or the output
// left clean (calibrate) instead of the process dying mid-write.
#pragma once

#include <csignal>

namespace tracetwin::cli {

// While alive, SIGINT sets the flag instead of ending the process; the
// previous handler comes back when it ends. One at a time.
class StopOnSigint {
 public:
  StopOnSigint();  // clears the flag
  ~StopOnSigint();
  StopOnSigint(const StopOnSigint&) = delete;
  StopOnSigint& operator=(const StopOnSigint&) = delete;

  // Whether SIGINT arrived since the newest guard was made.
  static bool requested();

 private:
  struct sigaction previous_ {};
};

}  // namespace tracetwin::cli
