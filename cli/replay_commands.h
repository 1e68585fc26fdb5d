// The commands that replay, and so load LibTorch: `replay`, `calibrate` and
// `compare`. They run in tracetwin-replay, a second executable built beside
// tracetwin from the same main.cpp; tracetwin lists them in its --help and
// execs tracetwin-replay with the same arguments (cli/replay_forwarding.cpp).
// Loading LibTorch and its ~290 shared libraries took 0.65-0.93 s and 171 MB
// before any command ran, which every `inspect`, `predict` or `host` paid.
// Both executables register these names and descriptions, so their --help
// texts agree.
#pragma once

namespace tracetwin::cli {

// The helper's file name, looked for in tracetwin's own directory.
inline constexpr char kReplayHelperName[] = "tracetwin-replay";

inline constexpr char kReplayDescription[] = "Replay a trace's ops through LibTorch and time them";
inline constexpr char kCalibrateDescription[] =
    "Measure microbenchmarks and fit the per-family kernel models";
inline constexpr char kCompareDescription[] =
    "Replay and predict a trace side by side, per op family";

}  // namespace tracetwin::cli
