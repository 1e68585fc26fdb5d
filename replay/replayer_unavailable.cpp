// Built instead of the LibTorch replay when TRACETWIN_HAVE_TORCH is OFF, so
// inspect/predict still link and `replay` says why it cannot run.
#include "core/errors.h"
#include "replay/replayer.h"

namespace tracetwin::replay {

bool replayAvailable() { return false; }

ReplayResult replayGraph(const core::Graph&, const ReplayOptions&) {
  throw UnavailableError(
      "replay: built without LibTorch (configure with TRACETWIN_WITH_TORCH=ON "
      "and Debian's libtorch-dev installed)");
}

}  // namespace tracetwin::replay
