// Ctrl-C as a stop request (cli/stop_request.h): the flag, not the end of
// the process, while a guard lives; the previous handler after it.
#include "cli/stop_request.h"

#include <gtest/gtest.h>

#include <csignal>

namespace tracetwin::cli {
namespace {

int g_previous_calls = 0;
extern "C" void countCalls(int) { ++g_previous_calls; }

TEST(StopOnSigint, SigintSetsTheFlagAndThePreviousHandlerComesBack) {
  void (*const original)(int) = std::signal(SIGINT, countCalls);
  {
    const StopOnSigint stop;
    EXPECT_FALSE(StopOnSigint::requested());
    std::raise(SIGINT);  // would end the process without the guard's handler
    EXPECT_TRUE(StopOnSigint::requested());
    EXPECT_EQ(g_previous_calls, 0);
  }
  std::raise(SIGINT);
  EXPECT_EQ(g_previous_calls, 1);
  {
    const StopOnSigint again;  // a new guard starts clear
    EXPECT_FALSE(StopOnSigint::requested());
  }
  std::signal(SIGINT, original);
}

}  // namespace
}  // namespace tracetwin::cli
