// tracetwin's side of `export --from replay`: it links no LibTorch, so the
// export runs in tracetwin-replay (cli/export_command.cpp forwards it before
// reading any trace).
#include "cli/export_replay.h"
#include "core/errors.h"

namespace tracetwin::cli {

bool exportReplaysHere() { return false; }

DurationSource replayDurations(const core::Graph&, const std::string&, int) {
  throw UnavailableError("export --from replay: this executable does not replay");
}

}  // namespace tracetwin::cli
