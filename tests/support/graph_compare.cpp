#include "tests/support/graph_compare.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace tracetwin::testing {
namespace {

using namespace tracetwin::core;

// The fields a recorded tensor (TensorValue) and the Graph's tensor table
// (TensorRecord) have in common.
template <typename Tensor>
void expectSameTensorFields(const Tensor& x, const Tensor& y) {
  ASSERT_EQ(x.tensor_id, y.tensor_id);
  ASSERT_EQ(x.storage_id, y.storage_id);
  ASSERT_EQ(x.offset, y.offset);
  ASSERT_EQ(x.numel, y.numel);
  ASSERT_EQ(x.itemsize, y.itemsize);
  ASSERT_EQ(x.device, y.device);
  ASSERT_EQ(x.dtype, y.dtype);
}

void expectSameValueInGraphs(const Value& a, const Value& b) {
  ASSERT_EQ(a.kind, b.kind);
  ASSERT_EQ(a.type, b.type);
  ASSERT_EQ(a.int_value, b.int_value);
  ASSERT_EQ(a.bool_value, b.bool_value);
  ASSERT_EQ(a.string_value, b.string_value);
  if (a.double_value == a.double_value) {  // NaN is never equal to itself
    ASSERT_EQ(a.double_value, b.double_value);
  }
  const TensorValue& x = *a.tensor;
  const TensorValue& y = *b.tensor;
  expectSameTensorFields(x, y);
  ASSERT_EQ(x.shape, y.shape);
  ASSERT_EQ(x.strides, y.strides);
  ASSERT_EQ(a.elements.size(), b.elements.size());
  for (size_t i = 0; i < a.elements.size(); ++i) expectSameValueInGraphs(a.elements[i], b.elements[i]);
}

// Nodes with one schema text share one OpSchema: the same pattern in both.
std::map<std::string, const OpSchema*> schemasByText(const Graph& g) {
  std::map<std::string, const OpSchema*> by_text;
  for (const Node& n : g.nodes()) {
    if (n.op_schema_text.empty()) continue;
    auto [it, fresh] = by_text.emplace(n.op_schema_text.str(), n.schema.get());
    EXPECT_EQ(it->second, n.schema.get()) << "node " << n.id << " has its own copy of a schema";
  }
  return by_text;
}

}  // namespace

void expectIdenticalGraphs(const core::Graph& a, const core::Graph& b) {
  using namespace tracetwin::core;
  EXPECT_EQ(a.schema, b.schema);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.start_ts, b.start_ts);
  EXPECT_EQ(a.finish_ts, b.finish_ts);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.rootId(), b.rootId());
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& x = a.nodes()[i];
    const Node& y = b.nodes()[i];
    SCOPED_TRACE(x.id);
    ASSERT_EQ(x.id, y.id);
    ASSERT_EQ(x.name, y.name);
    ASSERT_EQ(x.parent, y.parent);
    ASSERT_EQ(x.children, y.children);
    ASSERT_EQ(x.rf_id, y.rf_id);
    ASSERT_EQ(x.fw_parent, y.fw_parent);
    ASSERT_EQ(x.seq_id, y.seq_id);
    ASSERT_EQ(x.scope, y.scope);
    ASSERT_EQ(x.tid, y.tid);
    ASSERT_EQ(x.fw_tid, y.fw_tid);
    ASSERT_EQ(x.op_schema_text, y.op_schema_text);
    ASSERT_EQ(x.schema == nullptr, y.schema == nullptr);
    ASSERT_EQ(x.kernel_backend, y.kernel_backend);
    ASSERT_EQ(x.kernel_file, y.kernel_file);
    ASSERT_EQ(x.tensor_range, y.tensor_range);
    ASSERT_EQ(x.comm.has_value(), y.comm.has_value());
    ASSERT_EQ(x.comm->collective_name, y.comm->collective_name);
    ASSERT_EQ(x.comm->in_msg_nelems, y.comm->in_msg_nelems);
    ASSERT_EQ(x.comm->pg_name, y.comm->pg_name);
    ASSERT_EQ(x.category, y.category);
    ASSERT_EQ(x.inputs.size(), y.inputs.size());
    ASSERT_EQ(x.outputs.size(), y.outputs.size());
    for (size_t k = 0; k < x.inputs.size(); ++k) expectSameValueInGraphs(x.inputs[k], y.inputs[k]);
    for (size_t k = 0; k < x.outputs.size(); ++k) expectSameValueInGraphs(x.outputs[k], y.outputs[k]);
  }
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const TensorRecord& x = a.tensors()[i];
    const TensorRecord& y = b.tensors()[i];
    expectSameTensorFields(x, y);
    ASSERT_EQ(x.first_node, y.first_node);
    ASSERT_EQ(x.first_seen_as_input, y.first_seen_as_input);
  }
  const auto sa = schemasByText(a);
  const auto sb = schemasByText(b);
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& [text, schema] : sa) EXPECT_EQ(schema == nullptr, sb.at(text) == nullptr);
}

}  // namespace tracetwin::testing
