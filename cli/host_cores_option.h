// `--host-cores`, shared by predict and compare: how many cores the CPU ranks
// of a multi-rank prediction share (docs/prediction.md, "Co-located ranks").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tracetwin::cli {

// Adds the option; values other than -1 (a host per rank) or a finite count
// of at least one core are usage errors (0, NaN and inf read as the default,
// 1e-300 as one core, -2 as -1, all silently).
void addHostCoresOption(CLI::App& sub, double& host_cores, const std::string& help);

}  // namespace tracetwin::cli
