#include "cli/stop_request.h"

#include <atomic>
#include <utility>

namespace tracetwin::cli {
namespace {

std::atomic<int> g_stop_requested{0};

extern "C" void onStopSignal(int signal) { g_stop_requested.store(signal); }

}  // namespace

StopOnSignal::StopOnSignal(std::initializer_list<int> signals) {
  g_stop_requested.store(0);
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  // Interrupted reads and sleeps resume: the work decides when to stop.
  action.sa_flags = SA_RESTART;
  for (const int signal : signals) {
    struct sigaction old {};
    sigaction(signal, &action, &old);
    previous_.emplace_back(signal, old);
  }
}

StopOnSignal::~StopOnSignal() {
  for (const auto& [signal, old] : previous_) sigaction(signal, &old, nullptr);
}

int StopOnSignal::requested() { return g_stop_requested.load(); }

const char* StopOnSignal::describe(int signal) {
  switch (signal) {
    case SIGINT:
      return "Ctrl-C";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

}  // namespace tracetwin::cli
