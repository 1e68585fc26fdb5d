#include "cli/stop_request.h"

#include <atomic>

namespace tracetwin::cli {
namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void onSigint(int) { g_stop_requested.store(true); }

}  // namespace

StopOnSigint::StopOnSigint() {
  g_stop_requested.store(false);
  struct sigaction action {};
  action.sa_handler = onSigint;
  sigemptyset(&action.sa_mask);
  // Interrupted reads and sleeps resume: the work decides when to stop.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_);
}

StopOnSigint::~StopOnSigint() { sigaction(SIGINT, &previous_, nullptr); }

bool StopOnSigint::requested() { return g_stop_requested.load(); }

}  // namespace tracetwin::cli
