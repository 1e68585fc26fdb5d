// `export --chakra --from replay`: durations from a replay of the trace on
// this host. tracetwin, which links no LibTorch, hands such an export to
// tracetwin-replay (cli/export_command.cpp); each executable links one
// definition of these: export_replay.cpp (tracetwin-replay, replays) or
// export_replay_forwarded.cpp (tracetwin, forwards).
#pragma once

#include <string>

#include "cli/chakra_export.h"
#include "core/graph.h"

namespace tracetwin::cli {

// Whether this executable replays (tracetwin-replay) or forwards.
bool exportReplaysHere();

// Each replayed op's median device and CPU time and its start in the last
// measured iteration, from `iters` measured iterations on `device`.
DurationSource replayDurations(const core::Graph& graph, const std::string& device, int iters);

}  // namespace tracetwin::cli
