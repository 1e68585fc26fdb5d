#include "calibration/graph_builder.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "core/errors.h"
#include "core/op_schema.h"
#include "core/aten_schemas.h"

namespace tracetwin::calibration {
namespace {

constexpr core::NodeId kRootId = 1;
constexpr core::NodeId kThreadId = 2;
constexpr int64_t kThreadTid = 1;  // what 1.0.1 traces record for the Python thread

int64_t numelOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string listType(const char* element, size_t n) {
  std::string t = "GenericList[";
  for (size_t i = 0; i < n; ++i) t += (i == 0 ? "" : ",") + std::string(element);
  return t + "]";
}

}  // namespace

std::string traceTypeName(core::DType dtype) {
  switch (dtype) {
    case core::DType::kFloat32:
      return "float";
    case core::DType::kFloat64:
      return "double";
    case core::DType::kFloat16:
      return "c10::Half";
    case core::DType::kBFloat16:
      return "c10::BFloat16";
    case core::DType::kInt8:
      return "signed char";
    case core::DType::kUInt8:
      return "unsigned char";
    case core::DType::kInt16:
      return "short int";
    case core::DType::kInt32:
      return "int";
    case core::DType::kInt64:
      return "long int";
    case core::DType::kBool:
      return "bool";
    default:
      break;
  }
  throw UsageError(fmt::format("microbenchmarks cannot use dtype {}", core::dtypeName(dtype)));
}

GraphBuilder::GraphBuilder(std::string device) : device_(std::move(device)) {}

core::Value GraphBuilder::tensor(const std::vector<int64_t>& shape, core::DType dtype) {
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = "Tensor(" + traceTypeName(dtype) + ")";
  core::TensorValue& t = *v.tensor;
  t.tensor_id = next_tensor_++;
  t.storage_id = next_tensor_++;
  t.offset = 0;
  t.numel = numelOf(shape);
  t.itemsize = core::dtypeItemsize(dtype);
  t.device = device_;
  t.dtype = dtype;
  t.shape = shape;
  return v;
}

core::Value GraphBuilder::viewOf(const core::Value& base, const std::vector<int64_t>& shape) {
  core::Value v = base;
  v.tensor->tensor_id = next_tensor_++;
  v.tensor->numel = numelOf(shape);
  v.tensor->shape = shape;
  v.tensor->strides.clear();
  return v;
}

core::Value GraphBuilder::undefinedTensor() {
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = "Tensor(nullptr (uninitialized))";
  v.tensor->tensor_id = next_tensor_++;
  return v;
}

core::Value GraphBuilder::intValue(int64_t i) {
  core::Value v;
  v.kind = core::ValueKind::kInt;
  v.type = "Int";
  v.int_value = i;
  return v;
}

core::Value GraphBuilder::doubleValue(double d) {
  core::Value v;
  v.kind = core::ValueKind::kDouble;
  v.type = "Double";
  v.double_value = d;
  return v;
}

core::Value GraphBuilder::boolValue(bool b) {
  core::Value v;
  v.kind = core::ValueKind::kBool;
  v.type = "Bool";
  v.bool_value = b;
  return v;
}

core::Value GraphBuilder::stringValue(const std::string& str) {
  core::Value v;
  v.kind = core::ValueKind::kString;
  v.type = "String";
  v.string_value = str;
  return v;
}

core::Value GraphBuilder::none() {
  core::Value v;
  v.kind = core::ValueKind::kNone;
  v.type = "None";
  v.string_value = "<None>";
  return v;
}

core::Value GraphBuilder::deviceValue() const {
  core::Value v;
  v.kind = core::ValueKind::kDevice;
  v.type = "Device";
  v.string_value = device_;
  return v;
}

core::Value GraphBuilder::intList(const std::vector<int64_t>& ints) {
  core::Value v;
  v.kind = core::ValueKind::kList;
  v.type = listType("Int", ints.size());
  for (int64_t i : ints) v.elements.push_back(intValue(i));
  return v;
}

core::Value GraphBuilder::boolList(const std::vector<bool>& bools) {
  core::Value v;
  v.kind = core::ValueKind::kList;
  v.type = listType("Bool", bools.size());
  for (bool b : bools) v.elements.push_back(boolValue(b));
  return v;
}

core::Value GraphBuilder::tensorList(const std::vector<core::Value>& tensors) {
  core::Value v;
  v.kind = core::ValueKind::kList;
  v.type = "GenericList[";
  for (size_t i = 0; i < tensors.size(); ++i) v.type += (i == 0 ? "" : ",") + tensors[i].type;
  v.type += "]";
  v.elements = tensors;
  return v;
}

core::NodeId GraphBuilder::op(const std::string& schema_text, std::vector<core::Value> inputs,
                              std::vector<core::Value> outputs, const std::string& tensor_range) {
  core::Node n;
  n.id = next_node_++;
  n.parent = kThreadId;
  n.rf_id = n.id;
  n.tid = kThreadTid;
  n.fw_tid = 0;
  n.op_schema_text = schema_text;
  n.schema = std::make_shared<const core::OpSchema>(
      core::parseOpSchema(schema_text, fmt::format("microbenchmark node {}", n.id)));
  n.name = n.schema->qualifiedName();
  n.tensor_range = tensor_range;
  const size_t expected = n.schema->arguments.size();
  if (!n.schema->is_vararg && inputs.size() != expected) {
    throw UsageError(fmt::format("microbenchmark node {} ({}): {} inputs given, schema has {}",
                                 n.id, n.name, inputs.size(), expected));
  }
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  nodes_.push_back(std::move(n));
  return nodes_.back().id;
}

core::Value GraphBuilder::sharedTensor(const std::vector<int64_t>& shape, core::DType dtype) {
  auto [it, made] = shared_.try_emplace({shape, dtype});
  if (made) it->second = tensor(shape, dtype);
  return it->second;
}

void GraphBuilder::spacer() {
  constexpr int64_t kFloats = 16 * 1024;
  if (spacer_buffers_.empty()) {
    spacer_buffers_ = {tensor({kFloats}), tensor({kFloats})};
  }
  const core::NodeId id =
      op("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
         {spacer_buffers_[0], spacer_buffers_[1], boolValue(false)}, {spacer_buffers_[0]});
  nodes_.back().scope = kSpacerScope;
  (void)id;
}

void GraphBuilder::busySpacer(int64_t n) {
  if (busy_buffers_.empty()) busy_buffers_ = {tensor({n, n}), tensor({n, n})};
  op(core::schemas::kMm, {busy_buffers_[0], busy_buffers_[1]},
     {tensor({n, n})});
  nodes_.back().scope = kSpacerScope;
}

void GraphBuilder::flush(int64_t bytes) {
  if (flush_buffers_.empty()) {
    const int64_t floats = std::max<int64_t>(bytes / 8, 1);
    flush_buffers_ = {tensor({floats}), tensor({floats})};
  }
  op("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
     {flush_buffers_[0], flush_buffers_[1], boolValue(false)}, {flush_buffers_[0]});
  nodes_.back().scope = kSpacerScope;
}

namespace {

// Replaces every tensor of `v` that `renamed` has (by tensor id).
void substituteTensors(core::Value& v, const std::map<int64_t, core::Value>& renamed) {
  if (v.kind == core::ValueKind::kTensor) {
    auto it = renamed.find(v.tensor->tensor_id);
    if (it != renamed.end()) v = it->second;
    return;
  }
  for (core::Value& e : v.elements) substituteTensors(e, renamed);
}

void collectIds(const core::Value& v, std::set<int64_t>* ids, std::set<int64_t>* storages) {
  core::forEachTensor(v, [&](const core::TensorValue& t) {
    ids->insert(t.tensor_id);
    storages->insert(t.storage_id);
  });
}

}  // namespace

void GraphBuilder::renewOutputs(core::Value& v, const std::set<int64_t>& input_ids,
                                const std::set<int64_t>& input_storages, Renaming* renaming) {
  if (v.kind != core::ValueKind::kTensor) {
    for (core::Value& e : v.elements) renewOutputs(e, input_ids, input_storages, renaming);
    return;
  }
  if (!v.tensor->defined() || input_ids.count(v.tensor->tensor_id) > 0) return;  // in place
  core::Value fresh = v;
  fresh.tensor->tensor_id = next_tensor_++;
  // A view keeps its input's storage (renewed or not); anything else gets
  // its own.
  const int64_t storage = v.tensor->storage_id;
  if (auto it = renaming->storages.find(storage); it != renaming->storages.end()) {
    fresh.tensor->storage_id = it->second;
  } else if (input_storages.count(storage) == 0) {
    fresh.tensor->storage_id = next_tensor_++;
    renaming->storages[storage] = fresh.tensor->storage_id;
  }
  renaming->tensors[v.tensor->tensor_id] = fresh;
  v = fresh;
}

void GraphBuilder::repeatOps(core::NodeId first, core::NodeId end) {
  std::vector<core::Node> copies;
  Renaming renaming;
  for (const core::Node& n : nodes_) {
    if (n.id < first || n.id >= end) continue;
    core::Node c = n;
    c.id = next_node_++;
    c.rf_id = c.id;
    std::set<int64_t> input_ids, input_storages;
    for (core::Value& v : c.inputs) {
      substituteTensors(v, renaming.tensors);
      collectIds(v, &input_ids, &input_storages);
    }
    for (core::Value& v : c.outputs) {
      substituteTensors(v, renaming.tensors);  // in place on a tensor renewed before
      renewOutputs(v, input_ids, input_storages, &renaming);
    }
    copies.push_back(std::move(c));
  }
  for (core::Node& c : copies) nodes_.push_back(std::move(c));
}

core::Graph GraphBuilder::build(const std::string& source_name) {
  core::Graph g;
  g.schema = "1.0.1";
  g.source_path = source_name;
  core::Node root;
  root.id = kRootId;
  root.parent = kRootId;
  root.name = "[pytorch|profiler|execution_graph|process]";
  root.tid = 0;
  g.addNode(std::move(root));
  core::Node thread;
  thread.id = kThreadId;
  thread.parent = kRootId;
  thread.name = "[pytorch|profiler|execution_graph|thread]";
  thread.tid = kThreadTid;
  g.addNode(std::move(thread));
  for (core::Node& n : nodes_) g.addNode(std::move(n));
  nodes_.clear();
  g.finalize();
  return g;
}

}  // namespace tracetwin::calibration
