// A signal as a request to stop at the next safe point, for the commands that
// measure (replay, calibrate): the work polls the flag between ops or
// points, so what was measured can still be reported (replay) or the output
// left clean (calibrate) instead of the process dying mid-write.
#pragma once

#include <csignal>
#include <initializer_list>
#include <vector>

namespace tracetwin::cli {

// While alive, the given signals (Ctrl-C's SIGINT by default; calibrate adds
// SIGTERM and SIGHUP, a scheduler's and a closed terminal's) set the flag
// instead of ending the process; the previous handlers come back when it
// ends. One at a time.
class StopOnSignal {
 public:
  explicit StopOnSignal(std::initializer_list<int> signals = {SIGINT});  // clears the flag
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  // The signal that arrived since the newest guard was made; 0 for none.
  static int requested();
  // "Ctrl-C" for SIGINT, else the signal's name ("SIGTERM").
  static const char* describe(int signal);

 private:
  std::vector<std::pair<int, struct sigaction>> previous_;
};

}  // namespace tracetwin::cli
