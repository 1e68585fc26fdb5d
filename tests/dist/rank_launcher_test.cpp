// `replay --nproc` (cli/rank_launcher.h) with shell scripts for ranks: the
// environment each gets, and how one failing, dying or hanging rank ends the
// launch.
#include "cli/rank_launcher.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/traces.h"

namespace tracetwin::cli {
namespace {

LaunchSpec shell(int nproc, const std::string& script, double grace_s = 30) {
  LaunchSpec spec;
  spec.nproc = nproc;
  spec.program = "/bin/sh";
  spec.argv = {"sh", "-c", script};
  spec.grace_s = grace_s;
  return spec;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RankLauncher, EveryRankGetsTheTorchrunEnvironment) {
  testing::TempDir dir;
  const LaunchResult r = launchRanks(shell(
      3, "echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT "
         "$TRACETWIN_RANK_LAUNCHER > " + dir.path() + "/r$RANK"));
  EXPECT_EQ(launchExitCode(r), 0);
  EXPECT_EQ(r.first_failed, -1);
  ASSERT_EQ(r.ranks.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(r.ranks[size_t(k)].exit_code, 0);
    EXPECT_EQ(slurp(dir.path() + "/r" + std::to_string(k)),
              fmt::format("{} 3 {} 3 127.0.0.1 {} 1\n", k, k, r.master_port));
  }
  EXPECT_GT(r.master_port, 0);
}

TEST(RankLauncher, BadInputOnOneRankIsTheLaunchsExitCode) {
  // Rank 1 fails on its input (2); rank 0 then fails on the missing peer
  // (4), sooner: rank 1 is still named, and the launch exits 2.
  const LaunchResult r =
      launchRanks(shell(2, "if [ $RANK = 1 ]; then sleep 0.3; exit 2; else exit 4; fi"));
  EXPECT_EQ(r.first_failed, 1);
  EXPECT_EQ(launchExitCode(r), 2);
  EXPECT_EQ(describeExit(r.ranks[1]), "exited with code 2");
}

TEST(RankLauncher, ARankFailingOnItsInputEndsTheOthersSoon) {
  // Rank 0 cannot read its trace (2) before the rendezvous; rank 1 would
  // wait on the store for the whole grace. The short input grace ends it.
  const auto start = std::chrono::steady_clock::now();
  LaunchSpec spec = shell(2, "if [ $RANK = 0 ]; then exit 2; fi; exec sleep 30", 60);
  spec.input_grace_s = 0.3;
  const LaunchResult r = launchRanks(spec);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20);  // far from the 60 s grace and the 30 s sleep
  EXPECT_EQ(r.first_failed, 0);
  EXPECT_TRUE(r.ranks[1].ended_by_launcher);
  EXPECT_NE(describeExit(r.ranks[1]).find("waiting for rank 0, which failed on its input"),
            std::string::npos)
      << describeExit(r.ranks[1]) << ": it waited for rank 0, it did not hang";
  EXPECT_EQ(launchExitCode(r), 2);
}

TEST(RankLauncher, AKilledRankIsNamedAndTheOthersEndAfterTheGrace) {
  const auto start = std::chrono::steady_clock::now();
  const LaunchResult r =
      launchRanks(shell(3, "if [ $RANK = 2 ]; then kill -9 $$; fi; exec sleep 30", 0.3));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10);  // the grace, then SIGTERM: far from the 30 s sleep
  EXPECT_EQ(r.first_failed, 2);
  EXPECT_EQ(r.ranks[2].signal, SIGKILL);
  EXPECT_FALSE(r.ranks[2].ended_by_launcher);
  EXPECT_TRUE(r.ranks[0].ended_by_launcher);
  EXPECT_EQ(launchExitCode(r), 4);
  EXPECT_NE(describeExit(r.ranks[2]).find("killed by signal 9"), std::string::npos);
}

TEST(RankLauncher, ARankThatHangsIsTheCulprit) {
  // Rank 0 gives up on its peer (4); rank 1 hangs until the launcher ends it.
  const LaunchResult r =
      launchRanks(shell(2, "if [ $RANK = 1 ]; then exec sleep 30; else sleep 0.2; exit 4; fi", 0.3));
  EXPECT_EQ(r.first_failed, 1);
  EXPECT_TRUE(r.ranks[1].ended_by_launcher);
  EXPECT_NE(describeExit(r.ranks[1]).find("still running: hung"), std::string::npos)
      << describeExit(r.ranks[1]);
  EXPECT_EQ(launchExitCode(r), 4);
}

TEST(RankLauncher, CtrlCIsForwardedToEveryRank) {
  std::thread interrupt([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  LaunchSpec spec = shell(2, "exec sleep 30");
  spec.interrupt_grace_s = 5;
  const LaunchResult r = launchRanks(spec);
  interrupt.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(launchExitCode(r), 130);
  for (const RankExit& e : r.ranks) EXPECT_EQ(e.signal, SIGINT);
  // Ranks the forwarded Ctrl-C ended are not a failure of one of them.
  EXPECT_LT(r.first_failed, 0);
  for (const RankExit& e : r.ranks) {
    EXPECT_NE(describeExit(e).find("the Ctrl-C passed on to it"), std::string::npos)
        << describeExit(e);
  }
}

TEST(RankLauncher, ARankTheOomKillerEndedIsSaidToBeOutOfMemory) {
  RankExit r;
  r.signal = SIGKILL;
  EXPECT_EQ(describeExit(r), "was killed by signal 9 (Killed)");
  r.oom_killed = true;
  EXPECT_NE(describeExit(r).find("most likely by the kernel's OOM killer (out of memory"),
            std::string::npos)
      << describeExit(r);
}

TEST(RankLauncher, AProgramThatCannotRunIsUnavailable) {
  LaunchSpec spec = shell(2, "");
  spec.program = "/nonexistent/tracetwin";
  const LaunchResult r = launchRanks(spec);
  EXPECT_EQ(launchExitCode(r), 3);
}

}  // namespace
}  // namespace tracetwin::cli
