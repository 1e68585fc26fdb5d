// Handing a command to tracetwin-replay, the executable beside tracetwin
// that links LibTorch (cli/replay_forwarding.cpp): `replay`, `calibrate` and
// `compare` always, `export --from replay` (cli/export_command.cpp) when it
// must replay.
#pragma once

#include <string>
#include <vector>

namespace tracetwin::cli {

// Replaces this process with tracetwin-replay run with `args` (argv[0]
// included). `command` names the command in the UnavailableError thrown
// when the helper is not installed (a build without LibTorch) or cannot run.
[[noreturn]] void execReplayHelper(const std::string& command,
                                   const std::vector<std::string>& args);

// In tracetwin-replay: the build id tracetwin handed over (an environment
// variable, then cleared) must be this build's. A helper left from another
// build (a copied tracetwin, a half-updated install) would parse options it
// does not know, or read them otherwise; it is refused (UnavailableError)
// naming both builds. Nothing handed over (run by hand, a rank): no check.
void checkForwardingBuild();

}  // namespace tracetwin::cli
