// Built instead of the LibTorch replay when TRACETWIN_HAVE_TORCH is OFF, so
// inspect/predict still link and `replay` says why it cannot run.
#include "core/errors.h"
#include "replay/replayer.h"
#include "replay/sparse_add_bench.h"

namespace tracetwin::replay {

bool replayAvailable() { return false; }

ReplayResult replayGraph(const core::Graph&, const ReplayOptions&) {
  throw UnavailableError(
      "replay: built without LibTorch (configure with TRACETWIN_WITH_TORCH=ON "
      "and Debian's libtorch-dev installed)");
}

std::vector<SparseAddBenchTimes> measureSparseAdd(const std::vector<SparseAddBenchPoint>&,
                                                  const SparseAddBenchOptions&) {
  throw UnavailableError(
      "calibrate --families sparse_add: built without LibTorch (configure with "
      "TRACETWIN_WITH_TORCH=ON and Debian's libtorch-dev installed)");
}

}  // namespace tracetwin::replay
