// Each plan's per-rank step traces on disk, for `sweep --emit-traces DIR`
// (replay elsewhere) and `sweep --measure` (replayed here): DIR/NAME/
// rank{r}.et.json and the Zipf tables' index side files beside them.
#pragma once

#include <string>
#include <vector>

#include "sweep/strategies.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

// A plan's directory under DIR: its name with every character but letters,
// digits, '_' and '-' made '_'.
std::string planDirectoryName(const std::string& plan_name);

// Writes every plan's traces under `dir`. Throws InputError before writing
// anything when two plans' names clean to one directory (one would overwrite
// the other, and --measure would time it twice), and when a directory or
// file cannot be made, naming it.
void writePlanTraces(const SweepSpec& spec, const std::vector<const Plan*>& plans,
                     const std::string& dir);

}  // namespace tracetwin::sweep
