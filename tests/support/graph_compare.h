// Two Graphs compared field by field, for tests of readers that must build
// the same Graph in different ways (whole file or streamed, one thread or
// several): every node field, every value (lists included), the tensor
// table and which nodes share an OpSchema. gtest assertions: call from a test.
#pragma once

#include "core/graph.h"

namespace tracetwin::testing {

void expectIdenticalGraphs(const core::Graph& a, const core::Graph& b);

}  // namespace tracetwin::testing
