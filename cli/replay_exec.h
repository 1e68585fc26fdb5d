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

}  // namespace tracetwin::cli
