// In the torch-free tracetwin: `replay`, `calibrate` and `compare` are handed
// to tracetwin-replay, which sits beside tracetwin and links LibTorch (as git
// hands `git foo` to git-foo). The helper gets the same argument vector,
// argv[0] included, so its usage lines and messages read "tracetwin ...";
// its own main.cpp decides the exit code, as it would have here. Without the
// helper (a build without LibTorch) these commands exit 3 saying what to
// install.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cli/command_registry.h"
#include "cli/replay_commands.h"
#include "core/errors.h"

namespace tracetwin::cli {
namespace {

namespace fs = std::filesystem;

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

[[noreturn]] void execReplayHelper(const CLI::App& sub) {
  const fs::path helper = helperPath();
  if (::access(helper.c_str(), X_OK) != 0) {
    throw UnavailableError(fmt::format(
        "{}: built without LibTorch: {}, which runs it, is not installed (install Debian's "
        "libtorch-dev and configure with -DTRACETWIN_WITH_TORCH=ON, which builds it beside "
        "tracetwin)",
        sub.get_name(), helper.string()));
  }
  // argv[0] as the user typed it: CLI11 names the app after it.
  std::vector<std::string> args{sub.get_parent()->get_name(), sub.get_name()};
  for (const std::string& a : sub.remaining()) args.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(helper.c_str(), argv.data());
  throw UnavailableError(
      fmt::format("{}: cannot run {}: {}", sub.get_name(), helper.string(), std::strerror(errno)));
}

// Every argument after the command's name, --help included, is the helper's:
// it declares the options and prints their help.
std::function<void()> setupForwarding(CLI::App& sub) {
  sub.prefix_command();
  sub.set_help_flag();
  return [&sub] { execReplayHelper(sub); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(replay, kReplayDescription, setupForwarding);
TRACETWIN_REGISTER_COMMAND(calibrate, kCalibrateDescription, setupForwarding);
TRACETWIN_REGISTER_COMMAND(compare, kCompareDescription, setupForwarding);

}  // namespace tracetwin::cli
