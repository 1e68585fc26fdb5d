// Reads Kineto / PyTorch-profiler Chrome traces (.json, .json.gz).
#pragma once

#include <string>
#include <string_view>

#include "core/kineto/kineto_trace.h"

namespace tracetwin::core::kineto {

// Parses a Kineto trace held in memory; `source` names it in errors.
// Accepts a top-level object with "traceEvents" (array), optional
// "deviceProperties" (array), "distributedInfo" (object), "schemaVersion".
// Throws InputError naming `source` and the byte offset (invalid JSON) or the
// event index and key (wrong structure or types) and what was expected.
KinetoTrace parseKinetoTrace(std::string_view json, const std::string& source);

// core::readMaybeGzipFile + parseKinetoTrace.
KinetoTrace readKinetoTrace(const std::string& path);

}  // namespace tracetwin::core::kineto
