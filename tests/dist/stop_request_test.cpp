// Ctrl-C as a stop request (cli/stop_request.h): the flag, not the end of
// the process, while a guard lives; the previous handler after it.
#include "cli/stop_request.h"

#include <gtest/gtest.h>

#include <csignal>

namespace tracetwin::cli {
namespace {

int g_previous_calls = 0;
extern "C" void countCalls(int) { ++g_previous_calls; }

TEST(StopOnSignal, SigintSetsTheFlagAndThePreviousHandlerComesBack) {
  void (*const original)(int) = std::signal(SIGINT, countCalls);
  {
    const StopOnSignal stop;
    EXPECT_EQ(StopOnSignal::requested(), 0);
    std::raise(SIGINT);  // would end the process without the guard's handler
    EXPECT_EQ(StopOnSignal::requested(), SIGINT);
    EXPECT_EQ(g_previous_calls, 0);
  }
  std::raise(SIGINT);
  EXPECT_EQ(g_previous_calls, 1);
  {
    const StopOnSignal again;  // a new guard starts clear
    EXPECT_EQ(StopOnSignal::requested(), 0);
  }
  std::signal(SIGINT, original);
}

// calibrate's guard: a scheduler's SIGTERM and a closed terminal's SIGHUP
// also stop at the next point (they left an empty --out behind).
TEST(StopOnSignal, TermAndHupWhenAsked) {
  void (*const original)(int) = std::signal(SIGTERM, countCalls);
  {
    const StopOnSignal stop({SIGINT, SIGTERM, SIGHUP});
    std::raise(SIGTERM);
    EXPECT_EQ(StopOnSignal::requested(), SIGTERM);
    EXPECT_STREQ(StopOnSignal::describe(SIGTERM), "SIGTERM");
  }
  std::signal(SIGTERM, original);
  EXPECT_STREQ(StopOnSignal::describe(SIGINT), "Ctrl-C");
}

}  // namespace
}  // namespace tracetwin::cli
