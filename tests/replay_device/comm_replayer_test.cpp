// Collectives replayed for real on a one-rank Gloo group (LibTorch's c10d).
// On one rank every collective has a known result: all_reduce, broadcast and
// reduce leave the tensor as it was; gathers, scatters and all_to_all copy it.
#include "replay/comm/comm_replayer.h"

#include <gtest/gtest.h>

#include <iostream>

#include "core/errors.h"
#include "replay/comm/collective_spec.h"
#include "tests/support/comm_nodes.h"
#include "tests/support/values.h"

namespace tracetwin::replay::comm {
namespace {

using testing::commNode102;
using testing::commNode110;
using testing::commTensor;

class CommReplayerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { replayer_ = CommReplayer::create("cpu").release(); }
  static void TearDownTestSuite() {
    delete replayer_;  // gtest's static fixture hook needs a raw pointer
    replayer_ = nullptr;
  }

  // Replays `node` when this LibTorch's Gloo can; otherwise checks that the
  // refusal names the backend, and skips.
  std::vector<at::Tensor> replayOrSkip(const core::Node& node, const std::vector<at::Tensor>& in) {
    std::string why;
    if (!replayer_->canReplay(node, &why)) {
      EXPECT_NE(why.find("backend gloo of this LibTorch cannot run"), std::string::npos) << why;
      return {};
    }
    return replayer_->replay(node, in);
  }

  static CommReplayer* replayer_;
};
CommReplayer* CommReplayerTest::replayer_ = nullptr;

at::Tensor sample(int64_t n, at::ScalarType type = at::kFloat) {
  return at::arange(1, n + 1, at::TensorOptions().dtype(type));
}

TEST_F(CommReplayerTest, UsesGlooOnCpu) { EXPECT_EQ(replayer_->backendName(), "gloo"); }

TEST_F(CommReplayerTest, AllReduceOnOneRankIsIdentityInPlace) {
  const at::Tensor t = sample(1000);
  const at::Tensor before = t.clone();
  const auto out = replayer_->replay(commNode110(1, "allreduce", {commTensor(1, 1000)}), {t});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data_ptr(), t.data_ptr());
  EXPECT_TRUE(at::equal(t, before));
}

TEST_F(CommReplayerTest, BroadcastOfLongTensorIsIdentity) {
  // resnet_1.1.0 node 602 broadcasts a Tensor(long) of 53 elements.
  const at::Tensor t = sample(53, at::kLong);
  const at::Tensor before = t.clone();
  replayer_->replay(commNode110(602, "broadcast", {commTensor(322, 53)}), {t});
  EXPECT_TRUE(at::equal(t, before));
}

TEST_F(CommReplayerTest, ReduceOnOneRankIsIdentity) {
  const at::Tensor t = sample(64);
  const at::Tensor before = t.clone();
  replayer_->replay(commNode110(2, "reduce", {commTensor(1, 64)}), {t});
  EXPECT_TRUE(at::equal(t, before));
}

TEST_F(CommReplayerTest, AllGatherCopiesIntoAReusedOutput) {
  const at::Tensor t = sample(16);
  const core::Node node = commNode110(3, "all_gather", {commTensor(1, 16)});
  const auto first = replayer_->replay(node, {t});
  ASSERT_EQ(first.size(), 1u);  // one rank: a list of one
  EXPECT_NE(first[0].data_ptr(), t.data_ptr());
  EXPECT_TRUE(at::equal(first[0], t));
  const auto second = replayer_->replay(node, {t});
  EXPECT_EQ(second[0].data_ptr(), first[0].data_ptr());  // no allocation in later iterations
}

TEST_F(CommReplayerTest, BackendNotesExplainEveryRefusal) {
  const auto notes = replayer_->backendNotes();
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  std::cout << "gloo probe notes:\n" << all;
  for (const CollectiveInfo& info : collectives()) {
    const core::Node node = commNode110(100, info.name, {commTensor(1, 4)});
    std::string why;
    if (!replayer_->canReplay(node, &why) && why.find("backend gloo") != std::string::npos) {
      EXPECT_NE(all.find(std::string(info.name) + " unsupported by gloo"), std::string::npos)
          << info.name;
    }
  }
}

TEST_F(CommReplayerTest, AllGatherIntoTensor) {
  const at::Tensor t = sample(10).reshape({2, 5});
  const auto out = replayOrSkip(commNode110(4, "_allgather_base", {commTensor(1, 10)}), {t});
  if (out.empty()) GTEST_SKIP();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(at::equal(out[0], t.flatten()));
}

TEST_F(CommReplayerTest, AllToAllSingleWithSplits) {
  const at::Tensor t = sample(12);
  const auto out =
      replayer_->replay(commNode110(5, "all_to_allv", {commTensor(1, 12)}, 1, {12}, {12}), {t});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(at::equal(out[0], t));
}

TEST_F(CommReplayerTest, OneTensorAllToAllUsesTheSingleForm) {
  // A one-rank list all_to_all holds one tensor: issued as all_to_all_single
  // (Gloo in LibTorch 1.13 has no list all_to_all).
  const at::Tensor a = sample(4);
  const auto out = replayer_->replay(commNode110(6, "alltoall", {commTensor(1, 4)}), {a});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].data_ptr(), a.data_ptr());
  EXPECT_TRUE(at::equal(out[0], a));
}

TEST_F(CommReplayerTest, ReduceScatter) {
  const at::Tensor t = sample(8);
  const auto out = replayOrSkip(commNode110(7, "reduce_scatter", {commTensor(1, 8)}), {t});
  if (out.empty()) GTEST_SKIP() << "this Gloo has no reduce_scatter";
  EXPECT_TRUE(at::equal(out[0], t));
}

TEST_F(CommReplayerTest, ReduceScatterTensor) {
  const at::Tensor t = sample(8);
  const auto out = replayOrSkip(commNode110(8, "_reduce_scatter_base", {commTensor(1, 8)}), {t});
  if (out.empty()) GTEST_SKIP() << "this Gloo has no _reduce_scatter_base";
  EXPECT_TRUE(at::equal(out[0], t));
}

TEST_F(CommReplayerTest, GatherAndScatter) {
  const at::Tensor t = sample(6);
  const auto gathered = replayOrSkip(commNode110(9, "gather", {commTensor(1, 6)}), {t});
  if (!gathered.empty()) {
    EXPECT_TRUE(at::equal(gathered[0], t));
  }
  const auto scattered = replayOrSkip(commNode110(10, "scatter", {commTensor(1, 6)}), {t});
  if (!scattered.empty()) {
    EXPECT_TRUE(at::equal(scattered[0], t));
  }
}

TEST_F(CommReplayerTest, BarrierAndWait) {
  EXPECT_TRUE(replayer_->replay(commNode110(11, "barrier", {}), {}).empty());
  EXPECT_TRUE(replayer_->replay(commNode102(12, "wait", {}, 1), {}).empty());
}

TEST_F(CommReplayerTest, PointToPointIsRefusedWithAReason) {
  const core::Node node = commNode110(13, "send", {commTensor(1, 4)});
  std::string why;
  EXPECT_FALSE(replayer_->canReplay(node, &why));
  EXPECT_NE(why.find("needs a peer rank"), std::string::npos) << why;
  try {
    replayer_->replay(node, {sample(4)});
    FAIL();
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("node 13 (record_param_comms)"), std::string::npos);
  }
}

TEST_F(CommReplayerTest, MultiRankGroupNeedsDistributedReplay) {
  // allgather_1.0.2 node 30: all_gather over 2 ranks.
  std::string why;
  EXPECT_FALSE(replayer_->canReplay(commNode102(30, "all_gather", {commTensor(14, 1)}, 2), &why));
  EXPECT_EQ(why.rfind("needs distributed replay", 0), 0u) << why;
}

TEST_F(CommReplayerTest, UnknownCollectiveIsRefused) {
  std::string why;
  EXPECT_FALSE(replayer_->canReplay(commNode110(14, "all_shuffle", {commTensor(1, 4)}), &why));
  EXPECT_NE(why.find("unknown collective 'all_shuffle'"), std::string::npos) << why;
}

TEST(CommReplayerCreate, RejectsUnknownDevice) {
  EXPECT_THROW(CommReplayer::create("tpu:0"), UsageError);
}

TEST(CommReplayerCreate, CudaWithoutGpuSaysWhy) {
  try {
    CommReplayer::create("cuda:0");
    GTEST_SKIP() << "a CUDA device and NCCL are present";
  } catch (const UnavailableError& e) {
    const std::string msg = e.what();
    const bool says_why =
        msg.find("no CUDA device") != std::string::npos ||
        msg.find("needs a LibTorch built with CUDA and NCCL") != std::string::npos;
    EXPECT_TRUE(says_why) << msg;
  }
}

}  // namespace
}  // namespace tracetwin::replay::comm
