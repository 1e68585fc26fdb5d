// The options of the replay loop that every replaying command shares
// (replay, compare): device, warm-up, measured and settle iterations, threads.
#pragma once

#include <CLI/CLI.hpp>

#include "replay/replayer.h"

namespace tracetwin::cli {

void addReplayLoopOptions(CLI::App& sub, replay::ReplayOptions& options);

}  // namespace tracetwin::cli
