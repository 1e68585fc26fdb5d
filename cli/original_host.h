// Whether a trace's original run (its meta file's "host") ran on this host.
// A replay/original ratio across two CPUs measures the CPUs, not the replay:
// the bundled originals of 2026-11-22 were captured on an EPYC of family 25
// and replayed at half their time on the family-26 one that followed it.
#pragma once

#include <string>
#include <vector>

#include "replay/trace_meta.h"

namespace tracetwin::cli {

// One phrase per difference ("L1 32 KiB there, 48 KiB here"); empty when
// the meta file records no host, when the original ran on a GPU or the
// replay does not run on the CPU, or when nothing known differs.
std::vector<std::string> originalHostDifferences(const replay::TraceMeta& meta,
                                                 const std::string& replay_device);

// Prints the warning for non-empty `differences`.
void printOriginalHostWarning(const std::vector<std::string>& differences);

}  // namespace tracetwin::cli
