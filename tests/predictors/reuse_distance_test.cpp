#include "predictors/host/reuse_distance.h"

#include <gtest/gtest.h>

#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;


// Float tensor of `mib` MiB on storage `storage`.
TEST(ReuseDistance, EachOpHasItsInputsDistanceInTheTrafficSinceTheirLastTouch) {
  // A (4 MiB) read by op 0 and op 2, B (8 MiB) by op 1 between them; op 2
  // also reads C (2 MiB). The iteration repeats. Every tensor is larger
  // than the 1 MiB private cache: each touch brings all of it in.
  const core::Node n0 = opNode("aten::relu", {mibTensor(4, 1)}, {});
  const core::Node n1 = opNode("aten::relu", {mibTensor(8, 2)}, {});
  const core::Node n2 = opNode("aten::add", {mibTensor(4, 1), mibTensor(2, 3)}, {});
  for (const double private_cache : {0.0, 1.0 * kMiB}) {
    const std::vector<double> reuse = inputReuseBytes({&n0, &n1, &n2}, private_cache);
    ASSERT_EQ(reuse.size(), 3u);
    // Op 0: A last touched by op 2, with C: 2 MiB, plus half of A.
    EXPECT_DOUBLE_EQ(reuse[0], (2 + 2) * kMiB);
    // Op 1: B a step ago: C, then A twice (each read brings it in again), plus 4.
    EXPECT_DOUBLE_EQ(reuse[1], (2 + 4 + 4 + 4) * kMiB);
    // Op 2: A after B (8 + 2); C after A, A and B (16 + 1); weighted by bytes.
    EXPECT_DOUBLE_EQ(reuse[2], (4 * (8 + 2) + 2 * (16 + 1)) / 6.0 * kMiB);
  }
}

TEST(ReuseDistance, ReadsWithinThePrivateCacheBringNothingIn) {
  // An optimizer's ops over one parameter: P (2 MiB) read by op 0, then M
  // (256 KiB) updated in place ten times, then P again.
  const core::Value m = tensor({64 * 1024}, core::DType::kFloat32, 2, "cpu");
  std::vector<core::Node> nodes = {opNode("aten::relu", {mibTensor(2, 1)}, {})};
  for (int k = 0; k < 10; ++k) nodes.push_back(opNode("aten::mul_", {m}, {m}));
  nodes.push_back(opNode("aten::relu", {mibTensor(2, 1)}, {}));
  std::vector<const core::Node*> ops;
  for (const core::Node& n : nodes) ops.push_back(&n);
  // Every touch counted: ten times M, plus half of P.
  EXPECT_DOUBLE_EQ(inputReuseBytes(ops, 0).back(), (2.5 + 1) * kMiB);
  // A 1 MiB private cache: only M's first read a step after the last one
  // brings it in (P came between, twice); its other reads bring nothing.
  EXPECT_DOUBLE_EQ(inputReuseBytes(ops, kMiB).back(), (0.25 + 1) * kMiB);
  // An iteration's traffic through the last-level cache (co-located ranks'
  // shares). With the private cache: P at op 0 right after its last read
  // (the 1 MiB of it the cache kept stays), M once, P again after 2.5 MiB of
  // M; without it, every touch.
  double brought = -1;
  inputReuseBytes(stepTouches(ops), kMiB, &brought);
  EXPECT_DOUBLE_EQ(brought, (1 + 0.25 + 2) * kMiB);
  inputReuseBytes(stepTouches(ops), 0, &brought);
  EXPECT_DOUBLE_EQ(brought, (2 + 2 + 10 * 0.25) * kMiB);
}

TEST(ReuseDistance, AnOpAloneHasOnlyItsOwnTensorsBetweenTwoCalls) {
  const core::Node add = opNode("aten::add", {mibTensor(4, 1), mibTensor(2, 2)}, {mibTensor(4, 3)});
  // A: C and the output (6 MiB), plus 2; C: A and the output (8), plus 1.
  EXPECT_DOUBLE_EQ(aloneReuseBytes(add, 0), (4 * (6 + 2) + 2 * (8 + 1)) / 6.0 * kMiB);
  EXPECT_DOUBLE_EQ(aloneReuseBytes(add, kMiB), aloneReuseBytes(add, 0));
  // A 9 MiB private cache keeps all but 1 MiB of each tensor's 10 MiB op:
  // 3 MiB come in between two calls, 1 of them the input's own.
  EXPECT_DOUBLE_EQ(aloneReuseBytes(add, 9 * kMiB), (4 * (2 + 2) + 2 * (2 + 1)) / 6.0 * kMiB);
  // The closed form is the walk of a one-op iteration.
  for (const double private_cache : {0.0, 2.0 * kMiB, 9.0 * kMiB, 16.0 * kMiB})
    EXPECT_DOUBLE_EQ(aloneReuseBytes(add, private_cache),
                     inputReuseBytes(std::vector<const core::Node*>{&add}, private_cache)[0])
        << private_cache;
  // All of it: only its own half.
  EXPECT_DOUBLE_EQ(aloneReuseBytes(add, 16 * kMiB), (4 * 2 + 2 * 1) / 6.0 * kMiB);
  EXPECT_EQ(aloneReuseBytes(opNode("aten::zeros", {}, {mibTensor(1, 4)}), 0), 0.0);  // no inputs
  EXPECT_TRUE(inputReuseBytes(std::vector<const core::Node*>{}, 0).empty());
}

}  // namespace
}  // namespace tracetwin::predictors
