#include "tests/support/run.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/support/traces.h"

namespace tracetwin::testing {
namespace {

std::string readAll(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

}  // namespace

CommandRun runCommand(const std::string& command) {
  const TempDir dir;
  const std::string out = dir.path() + "/stdout", err = dir.path() + "/stderr";
  const int status = std::system((command + " >" + out + " 2>" + err).c_str());
  CommandRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = readAll(out);
  run.err = readAll(err);
  return run;
}

}  // namespace tracetwin::testing
