// In the torch-free tracetwin: `replay`, `calibrate` and `compare` are handed
// to tracetwin-replay, which sits beside tracetwin and links LibTorch (as git
// hands `git foo` to git-foo). The helper gets the same argument vector,
// argv[0] included, so its usage lines and messages read "tracetwin ...";
// its own main.cpp decides the exit code, as it would have here. Without the
// helper (a build without LibTorch) these commands exit 3 saying what to
// install.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cli/command_registry.h"
#include "cli/replay_commands.h"
#include "cli/replay_exec.h"

namespace tracetwin::cli {
namespace {

[[noreturn]] void forwardCommand(const CLI::App& sub) {
  // argv[0] as the user typed it: CLI11 names the app after it.
  std::vector<std::string> args{sub.get_parent()->get_name(), sub.get_name()};
  for (const std::string& a : sub.remaining()) args.push_back(a);
  execReplayHelper(sub.get_name(), args);
}

// Every argument after the command's name, --help included, is the helper's:
// it declares the options and prints their help.
std::function<void()> setupForwarding(CLI::App& sub) {
  sub.prefix_command();
  sub.set_help_flag();
  return [&sub] { forwardCommand(sub); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(replay, kReplayDescription, setupForwarding);
TRACETWIN_REGISTER_COMMAND(calibrate, kCalibrateDescription, setupForwarding);
TRACETWIN_REGISTER_COMMAND(compare, kCompareDescription, setupForwarding);

}  // namespace tracetwin::cli
