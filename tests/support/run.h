// Running the tracetwin binary this build made, from tests: exit code,
// stdout and stderr.
#pragma once

#include <filesystem>
#include <string>

#include "tests/support/paths.h"

namespace tracetwin::testing {

struct CommandRun {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
  std::string output() const { return out + err; }
};

// Runs `command` through the shell, stdout and stderr captured apart.
CommandRun runCommand(const std::string& command);

// `tracetwin ARGS`.
inline CommandRun runTracetwin(const std::string& args) {
  return runCommand(tracetwinBinary() + " " + args);
}

// Whether tracetwin-replay was built beside tracetwin (a build with
// LibTorch): then replay, calibrate and compare run.
inline bool replayHelperBuilt() {
  return std::filesystem::exists(std::filesystem::path(tracetwinBinary()).parent_path() /
                                 "tracetwin-replay");
}

}  // namespace tracetwin::testing
