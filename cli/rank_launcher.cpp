#include "cli/rank_launcher.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include "cli/exit_codes.h"
#include "core/errors.h"

namespace tracetwin::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_signal{0};
extern "C" void onLauncherSignal(int sig) { g_signal.store(sig); }

// Installs the launcher's handlers for SIGINT and SIGTERM, restores the old
// ones when done.
class SignalForwarding {
 public:
  SignalForwarding() {
    g_signal.store(0);
    struct sigaction sa {};
    sa.sa_handler = onLauncherSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Runs in the forked child: joins the ranks' process group, dies with the
// launcher, sets the rank's environment and becomes the program. Only
// async-signal-safe work after fork... setenv is not, but the launcher is
// single-threaded when it forks.
[[noreturn]] void becomeRank(const LaunchSpec& spec, int rank, int port, pid_t group,
                             pid_t launcher) {
  setpgid(0, group);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(kExitRuntime);  // the launcher died before prctl
  const std::string r = std::to_string(rank), n = std::to_string(spec.nproc);
  setenv("RANK", r.c_str(), 1);
  setenv("LOCAL_RANK", r.c_str(), 1);
  setenv("WORLD_SIZE", n.c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
  setenv("GROUP_RANK", "0", 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  setenv("TRACETWIN_RANK_LAUNCHER", "1", 1);
  unsetenv("TORCHELASTIC_USE_AGENT_STORE");
  for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(spec.program.c_str(), args.data());
  const std::string msg = fmt::format("tracetwin: rank {}: cannot run {}: {}\n", rank, spec.program,
                                      std::strerror(errno));
  (void)!write(STDERR_FILENO, msg.data(), msg.size());
  _exit(kExitUnavailable);
}

RankExit* findRank(std::vector<RankExit>& ranks, pid_t pid) {
  for (RankExit& r : ranks) {
    if (r.pid == pid) return &r;
  }
  return nullptr;
}

bool failed(const RankExit& r) { return r.signal != 0 || r.exit_code != 0; }

// The processes the kernel's OOM killer has ended since boot (/proc/vmstat,
// Linux 4.13+); -1 where it does not say.
int64_t oomKills() {
  std::ifstream in("/proc/vmstat");
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return -1;
}

// The rank that caused the others to fail: one killed by a signal we did not
// send, else one that failed on its own input or hardware (exit 2 or 3: its
// peers then fail with 4, sometimes sooner), else one that outlived the
// grace (it hung while the others gave up on it), else the first to fail.
int culprit(const LaunchResult& result) {
  for (const RankExit& r : result.ranks) {
    if (r.signal != 0 && !r.ended_by_launcher) return r.rank;
  }
  for (const RankExit& r : result.ranks) {
    if (r.exit_code == kExitInput || r.exit_code == kExitUnavailable) return r.rank;
  }
  for (const RankExit& r : result.ranks) {
    if (r.ended_by_launcher) return r.rank;
  }
  return result.first_failed;
}

}  // namespace

int pickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw RuntimeFailure(fmt::format("socket(): {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    throw RuntimeFailure("cannot find a free port on 127.0.0.1 for the rendezvous store: " + why);
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::string describeExit(const RankExit& r) {
  if (r.signal != 0) {
    std::string why;
    if (r.ended_by_launcher && r.outlived_rank >= 0) {
      why = fmt::format(" after the grace period that followed rank {}'s failure ({})",
                        r.outlived_rank,
                        r.outlived_input_failure
                            ? fmt::format("waiting for rank {}, which failed on its input",
                                          r.outlived_rank)
                            : "still running: hung, or waiting for it");
    } else if (r.oom_killed) {
      why =
          ", most likely by the kernel's OOM killer (out of memory: /proc/vmstat's oom_kill "
          "rose during the launch)";
    } else if (r.ended_by_launcher && r.signal == SIGINT) {
      why = ", the Ctrl-C passed on to it";
    } else if (r.ended_by_launcher) {
      why = " after the grace period (still running: hung)";
    }
    return fmt::format("was {} by signal {} ({}){}", r.ended_by_launcher ? "ended" : "killed",
                       r.signal, strsignal(r.signal), why);
  }
  return fmt::format("exited with code {}", r.exit_code);
}

int launchExitCode(const LaunchResult& result) {
  if (result.interrupted) return kExitInterrupted;
  if (result.first_failed < 0) return kExitOk;
  const RankExit& first = result.ranks[size_t(result.first_failed)];
  if (first.exit_code == kExitInput || first.exit_code == kExitUnavailable) return first.exit_code;
  return kExitRuntime;
}

LaunchResult launchRanks(const LaunchSpec& spec) {
  if (spec.nproc < 1) throw UsageError(fmt::format("--nproc {}: expected at least 1", spec.nproc));
  LaunchResult result;
  result.master_port = pickFreePort();
  SignalForwarding forwarding;
  const int64_t oom_before = oomKills();
  const pid_t launcher = getpid();
  pid_t group = 0;
  for (int rank = 0; rank < spec.nproc; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) {
      if (group > 0) kill(-group, SIGKILL);
      throw RuntimeFailure(fmt::format("cannot start rank {}: fork(): {}", rank,
                                       std::strerror(errno)));
    }
    if (pid == 0) becomeRank(spec, rank, result.master_port, group, launcher);
    if (group == 0) group = pid;
    setpgid(pid, group);  // also here: the child may not have run yet
    RankExit r;
    r.rank = rank;
    r.pid = pid;
    result.ranks.push_back(r);
  }

  int running = spec.nproc;
  std::optional<Clock::time_point> terminate_at;  // SIGTERM the survivors then
  std::optional<Clock::time_point> kill_at;       // SIGKILL them then
  bool forwarded = false;
  bool ending = false;  // SIGTERM went out
  while (running > 0) {
    int status = 0;
    const pid_t pid = waitpid(-group, &status, WNOHANG);
    if (pid > 0) {
      RankExit* r = findRank(result.ranks, pid);
      if (r == nullptr) continue;
      --running;
      if (WIFEXITED(status)) r->exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) r->signal = WTERMSIG(status);
      // A rank the forwarded Ctrl-C ended (before it could catch it, at start-up)
      // was ended by the launcher too, not a failure of its own.
      r->ended_by_launcher = r->signal != 0 && ((ending && !result.interrupted) ||
                                                (result.interrupted && r->signal == SIGINT));
      if (r->ended_by_launcher && result.first_failed >= 0) {
        const RankExit& first = result.ranks[size_t(result.first_failed)];
        r->outlived_rank = first.rank;
        r->outlived_input_failure =
            first.exit_code == kExitInput || first.exit_code == kExitUnavailable;
      }
      if (failed(*r) && result.first_failed < 0 && !result.interrupted) {
        result.first_failed = r->rank;
        const bool on_input = r->exit_code == kExitInput || r->exit_code == kExitUnavailable;
        const double grace = on_input ? std::min(spec.grace_s, spec.input_grace_s) : spec.grace_s;
        fmt::print(stderr, "tracetwin: rank {} {}; the other ranks have {:.0f} s to finish\n",
                   r->rank, describeExit(*r), grace);
        terminate_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(grace));
      }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;  // no children left
    if (const int sig = g_signal.exchange(0); sig != 0) {
      result.interrupted = true;
      if (!forwarded) {
        kill(-group, SIGINT);
        forwarded = true;
        terminate_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(spec.interrupt_grace_s));
      } else {
        kill(-group, SIGKILL);  // a second Ctrl-C: now
      }
    }
    const auto now = Clock::now();
    if (terminate_at && now >= *terminate_at) {
      kill(-group, SIGTERM);
      ending = true;
      terminate_at.reset();
      kill_at = now + std::chrono::seconds(2);
    }
    if (kill_at && now >= *kill_at) {
      kill(-group, SIGKILL);
      kill_at = now + std::chrono::seconds(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int64_t oom_after = oomKills();
  for (RankExit& r : result.ranks) {
    r.oom_killed = r.signal == SIGKILL && !r.ended_by_launcher && oom_after > oom_before;
  }
  // Interrupted with no rank failing before: nobody to blame.
  if (!result.interrupted || result.first_failed >= 0) result.first_failed = culprit(result);
  return result;
}

std::string ownExecutable() {
  char path[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw RuntimeFailure("cannot find this executable (/proc/self/exe)");
  return std::string(path, size_t(n));
}

}  // namespace tracetwin::cli
