#include "tests/support/comm_nodes.h"

#include <utility>

#include "tests/support/values.h"

namespace tracetwin::testing {

core::Value commTensor(int64_t id, int64_t numel) {
  return tensorValue(id, id + 1, {numel}, "float", 4, "cuda:0");
}

namespace {

core::Value floatTensors(std::vector<core::Value> tensors) {
  return tensorList(std::move(tensors), "GenericList[Tensor(float)]");
}

core::Value pgTuple() {
  core::Value out;
  out.kind = core::ValueKind::kTuple;
  out.type = "Tuple[String,String]";
  out.elements = {stringValue("0"), stringValue("default_pg")};
  return out;
}

}  // namespace

core::Node commNode110(int64_t id, const std::string& collective, std::vector<core::Value> tensors,
                       int64_t world_size, std::vector<int64_t> in_split,
                       std::vector<int64_t> out_split) {
  core::Node n;
  n.id = id;
  n.name = "record_param_comms";
  n.category = core::NodeCategory::kCommunication;
  if (!tensors.empty()) n.inputs.push_back(floatTensors(std::move(tensors)));
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

core::Node commNode102(int64_t id, const std::string& collective, std::vector<core::Value> tensors,
                       int64_t world_size) {
  core::Node n;
  n.id = id;
  n.name = "record_param_comms";
  n.category = core::NodeCategory::kCommunication;
  if (!tensors.empty()) n.inputs.push_back(floatTensors(std::move(tensors)));
  n.inputs.push_back(intValue(12));
  n.inputs.push_back(intValue(82149104));
  n.inputs.push_back(intValue(0));
  n.inputs.push_back(stringValue(collective));
  n.inputs.push_back(intListValue({}));
  n.inputs.push_back(intListValue({}));
  n.inputs.push_back(intValue(world_size));
  return n;
}

core::Node commNode101(int64_t id, const std::string& collective, core::Value tensor,
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
