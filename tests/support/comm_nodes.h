// Communication nodes as the sample traces record them (values copied from
// ../shared/traces: resnet_1.1.0 node 437, allgather_1.0.2 node 30,
// dlrm_8rank/rank0 node 727), built by hand so tests need no reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::testing {

// A float tensor of `numel` elements on cuda:0 (storage id + 1), as a
// collective's buffer.
core::Value commTensor(int64_t id, int64_t numel);

// Schema 1.1.0 record_param_comms: positional inputs plus comm attributes.
// world_size goes into both, as the trace has it.
core::Node commNode110(int64_t id, const std::string& collective, std::vector<core::Value> tensors,
                       int64_t world_size = 1, std::vector<int64_t> in_split = {},
                       std::vector<int64_t> out_split = {});

// Schema 1.0.2 (allgather_1.0.2 node 30): no comm attributes; world size is
// the last positional Int.
core::Node commNode102(int64_t id, const std::string& collective, std::vector<core::Value> tensors,
                       int64_t world_size);

// Schema 1.0.1 (dlrm rank0 node 727): a bare tensor, split sizes, no world size.
core::Node commNode101(int64_t id, const std::string& collective, core::Value tensor,
                       std::vector<int64_t> splits);

}  // namespace tracetwin::testing
