// Replacing this process with tracetwin-replay (cli/replay_exec.h).
#include "cli/replay_exec.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cli/build_id.h"
#include "cli/replay_commands.h"
#include "core/errors.h"

namespace tracetwin::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBuildVariable = "TRACETWIN_FORWARDING_BUILD";

// tracetwin-replay in the directory of this executable (not of argv[0],
// which a shell on PATH leaves bare).
fs::path helperPath() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw UnavailableError(
        fmt::format("cannot find {}: /proc/self/exe: {}", kReplayHelperName, ec.message()));
  }
  return self.parent_path() / kReplayHelperName;
}

}  // namespace

void execReplayHelper(const std::string& command, const std::vector<std::string>& args) {
  const fs::path helper = helperPath();
  if (::access(helper.c_str(), X_OK) != 0) {
    if (errno != ENOENT) {
      // There, but not runnable (a copy that lost its mode bits): not a
      // build without LibTorch.
      throw UnavailableError(fmt::format("{}: {} is there but cannot be run: {}", command,
                                         helper.string(), std::strerror(errno)));
    }
    throw UnavailableError(fmt::format(
        "{}: built without LibTorch: {}, which runs it, is not installed (install Debian's "
        "libtorch-dev and configure with -DTRACETWIN_WITH_TORCH=ON, which builds it beside "
        "tracetwin)",
        command, helper.string()));
  }
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::setenv(kBuildVariable, TRACETWIN_BUILD_ID, 1);
  ::execv(helper.c_str(), argv.data());
  ::unsetenv(kBuildVariable);
  throw UnavailableError(
      fmt::format("{}: cannot run {}: {}", command, helper.string(), std::strerror(errno)));
}

void checkForwardingBuild() {
  const char* handed = std::getenv(kBuildVariable);
  if (handed == nullptr) return;
  const std::string from(handed);
  ::unsetenv(kBuildVariable);  // the ranks and children it starts are its own build
  if (from == TRACETWIN_BUILD_ID) return;
  throw UnavailableError(fmt::format(
      "{} is from another build ({}) than the tracetwin that ran it ({}): rebuild both, or "
      "install them together",
      kReplayHelperName, TRACETWIN_BUILD_ID, from));
}

}  // namespace tracetwin::cli
