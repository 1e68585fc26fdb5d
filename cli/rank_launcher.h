// `tracetwin replay TRACE --nproc N`: starts N rank processes on this host
// the way torchrun's standalone mode does (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, a free MASTER_PORT), forwards
// Ctrl-C, and when one rank fails gives the others time to notice and exit
// by themselves before it ends them. Every child is reaped: the children
// share one process group the launcher signals, and die with the launcher
// (PR_SET_PDEATHSIG). POSIX, torch-free.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tracetwin::cli {

struct LaunchSpec {
  int nproc = 1;
  std::string program;            // executable each rank runs
  std::vector<std::string> argv;  // its arguments, argv[0] included
  std::map<std::string, std::string> env;  // added to each rank's environment
  // After the first rank fails: how long the others get to exit by
  // themselves (they fail their collectives and say why) before SIGTERM.
  double grace_s = 310;
  // The same, when that rank failed on its input or a missing feature (exit
  // 2 or 3): it usually fails before the rendezvous, and its peers then
  // wait on the store or a collective that can never happen (a missing
  // trace on rank 0 held rank 1 for the whole 310 s). Their own messages
  // would only say that they waited.
  double input_grace_s = 5;
  // After Ctrl-C is forwarded: how long before SIGTERM.
  double interrupt_grace_s = 5;
};

struct RankExit {
  int rank = 0;
  int pid = 0;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  // It outlived the grace and was terminated, or the Ctrl-C the launcher
  // passed on ended it (SIGINT) before it could catch it.
  bool ended_by_launcher = false;
  // The rank whose failure started that grace (-1: none), and whether it
  // failed on its input or hardware (exit 2 or 3): then the survivor was most
  // likely waiting for it at the rendezvous or a collective, not hung.
  int outlived_rank = -1;
  bool outlived_input_failure = false;
  // Killed (SIGKILL, not by the launcher) while /proc/vmstat's oom_kill
  // count rose: the kernel's OOM killer, most likely.
  bool oom_killed = false;
};

struct LaunchResult {
  std::vector<RankExit> ranks;  // by rank
  // The rank whose failure the others followed (a signal, bad input, a
  // missing feature, else the first to fail); -1 when none failed.
  int first_failed = -1;
  bool interrupted = false;     // Ctrl-C (or SIGTERM) reached the launcher
  int master_port = 0;
};

// Blocks until every rank has exited. Throws RuntimeFailure when a process
// cannot be started (fork or a free port).
LaunchResult launchRanks(const LaunchSpec& spec);

// "exited with code 2", "was killed by signal 9 (Killed)", "was ended by signal
// 15 (Terminated) after the grace period that followed rank 0's failure
// (waiting for rank 0, which failed on its input)".
std::string describeExit(const RankExit& r);

// The launcher's own exit code: 130 after Ctrl-C; 0 when every rank
// succeeded; else the first failed rank's code where it says bad input (2)
// or a missing feature (3), and 4 (the workload failed) otherwise.
int launchExitCode(const LaunchResult& result);

// A TCP port free on the loopback interface now (bound, read, released).
int pickFreePort();

// This executable (/proc/self/exe): what each rank runs.
std::string ownExecutable();

}  // namespace tracetwin::cli
