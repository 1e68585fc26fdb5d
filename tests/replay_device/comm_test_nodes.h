// Communication nodes as the sample traces record them (values copied from
// ../shared/traces: resnet_1.1.0 node 437, allgather_1.0.2 node 30,
// dlrm_8rank/rank0 node 727), built by hand so these tests need no reader.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "tests/value_builders.h"

namespace tracetwin::testing {

inline core::Value tensorValue(int64_t id, int64_t numel) {
  core::Value out;
  out.kind = core::ValueKind::kTensor;
  out.type = "Tensor(float)";
  out.tensor->tensor_id = id;
  out.tensor->storage_id = id + 1;
  out.tensor->numel = numel;
  out.tensor->itemsize = 4;
  out.tensor->device = "cuda:0";
  out.tensor->dtype = core::DType::kFloat32;
  out.tensor->shape = {numel};
  return out;
}

inline core::Value tensorList(std::vector<core::Value> tensors) {
  return listValue(std::move(tensors), "GenericList[Tensor(float)]");
}

inline core::Value pgTuple() {
  core::Value out;
  out.kind = core::ValueKind::kTuple;
  out.type = "Tuple[String,String]";
  out.elements = {stringValue("0"), stringValue("default_pg")};
  return out;
}

// Schema 1.1.0 record_param_comms: positional inputs plus comm attributes.
// world_size goes into both, as the trace has it.
inline core::Node commNode110(int64_t id, const std::string& collective,
                              std::vector<core::Value> tensors, int64_t world_size = 1,
                              std::vector<int64_t> in_split = {},
                              std::vector<int64_t> out_split = {}) {
  core::Node n;
  n.id = id;
  n.name = "record_param_comms";
  n.category = core::NodeCategory::kCommunication;
  if (!tensors.empty()) n.inputs.push_back(tensorList(std::move(tensors)));
  n.inputs.push_back(intValue(47));
  n.inputs.push_back(pgTuple());
  n.inputs.push_back(intValue(0));
  n.inputs.push_back(stringValue(collective));
  n.inputs.push_back(intListValue(in_split));
  n.inputs.push_back(intListValue(out_split));
  n.inputs.push_back(intValue(0));
  n.inputs.push_back(intValue(1));
  n.inputs.push_back(intValue(world_size));
  core::CommAttributes comm;
  comm.collective_name = collective;
  comm.dtype = "Float";
  comm.in_split_size = in_split;
  comm.out_split_size = out_split;
  comm.pg_name = "0";
  comm.pg_size = world_size;
  n.comm = comm;
  return n;
}

// Schema 1.0.2 (allgather_1.0.2 node 30): no comm attributes; world size is
// the last positional Int.
inline core::Node commNode102(int64_t id, const std::string& collective,
                              std::vector<core::Value> tensors, int64_t world_size) {
  core::Node n;
  n.id = id;
  n.name = "record_param_comms";
  n.category = core::NodeCategory::kCommunication;
  if (!tensors.empty()) n.inputs.push_back(tensorList(std::move(tensors)));
  n.inputs.push_back(intValue(12));
  n.inputs.push_back(intValue(82149104));
  n.inputs.push_back(intValue(0));
  n.inputs.push_back(stringValue(collective));
  n.inputs.push_back(intListValue({}));
  n.inputs.push_back(intListValue({}));
  n.inputs.push_back(intValue(world_size));
  return n;
}

// Schema 1.0.1 (dlrm rank0 node 727): a bare tensor, split sizes, no world size.
inline core::Node commNode101(int64_t id, const std::string& collective, core::Value tensor,
                              std::vector<int64_t> splits) {
  core::Node n;
  n.id = id;
  n.name = "record_param_comms";
  n.category = core::NodeCategory::kCommunication;
  n.inputs.push_back(std::move(tensor));
  n.inputs.push_back(intValue(147));
  n.inputs.push_back(intValue(94594108284448));
  n.inputs.push_back(intValue(0));
  n.inputs.push_back(stringValue(collective));
  n.inputs.push_back(intListValue(splits));
  n.inputs.push_back(intListValue(splits));
  return n;
}

}  // namespace tracetwin::testing
