// The 9 communication ops of one resnet_1.1.0 iteration replayed for real on
// a one-rank group, with tensors of the recorded sizes and types: Gloo on the
// CPU, NCCL on a GPU. Each backend is skipped, saying why, where it is absent.
#include <gtest/gtest.h>

#include <memory>

#include "core/errors.h"
#include "core/graph.h"
#include "core/trace_reader.h"
#include "replay/comm/comm_replayer.h"
#include "tests/support/paths.h"

namespace tracetwin::replay::comm {
namespace {

at::ScalarType scalarType(core::DType dtype) {
  switch (dtype) {
    case core::DType::kInt64:
      return at::kLong;
    case core::DType::kInt32:
      return at::kInt;
    case core::DType::kFloat16:
      return at::kHalf;
    default:
      return at::kFloat;
  }
}

std::vector<at::Tensor> inputTensors(const core::Node& node, const at::Device& device) {
  std::vector<at::Tensor> out;
  for (const core::Value& v : node.inputs) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (!t.defined()) return;
      out.push_back(at::arange(t.numel, at::TensorOptions().dtype(scalarType(t.dtype))).to(device));
    });
  }
  return out;
}

class CommReplayTraces : public ::testing::TestWithParam<const char*> {};

TEST_P(CommReplayTraces, Resnet110IterationReplaysOnOneRank) {
  const std::string device = GetParam();
  std::unique_ptr<CommReplayer> replayer;
  try {
    replayer = CommReplayer::create(device);
  } catch (const UnavailableError& e) {
    GTEST_SKIP() << e.what();
  }
  const at::Device tensor_device(device);
  const core::Graph graph = core::readTrace(testing::sharedTrace("resnet_1.1.0_et.json.gz"));
  const core::Selection selection = core::selectTopLevelOps(graph);
  int replayed = 0;
  int64_t elements = 0;
  for (core::NodeId id : selection.ops) {
    const core::Node& node = graph.node(id);
    if (node.category != core::NodeCategory::kCommunication) continue;
    std::string why;
    ASSERT_TRUE(replayer->canReplay(node, &why)) << "node " << id << ": " << why;
    const std::vector<at::Tensor> in = inputTensors(node, tensor_device);
    std::vector<at::Tensor> before;
    for (const at::Tensor& t : in) before.push_back(t.clone());
    replayer->replay(node, in);
    // broadcast, all_reduce (sum over one rank) and wait leave data unchanged.
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_TRUE(at::equal(in[i], before[i])) << "node " << id;
      elements += in[i].numel();
    }
    ++replayed;
  }
  EXPECT_EQ(replayed, 9);
  EXPECT_GT(elements, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, CommReplayTraces, ::testing::Values("cpu", "cuda:0"));

}  // namespace
}  // namespace tracetwin::replay::comm
