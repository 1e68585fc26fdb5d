// The profiler trace a capture recorded beside its execution trace
// (scripts/capture.py): "X.kineto.json.gz" for "X.et.json.gz", else the file
// the meta file names under profiler_trace (the legacy profiler's export,
// "X.profiler.json.gz", on a PyTorch without Kineto). Torch-free.
#pragma once

#include <string>

namespace tracetwin::cli {

// The path when such a file exists; empty otherwise. Throws InputError when
// the meta file exists but is not JSON.
std::string recordedKinetoBeside(const std::string& trace);

}  // namespace tracetwin::cli
