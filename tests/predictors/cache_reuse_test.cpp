#include "predictors/host/cache_reuse.h"

#include <gtest/gtest.h>

#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;


// Float tensor of `mib` MiB on storage `storage`.
TEST(CacheReuse, InputsTouchedMoreThanACacheOfTrafficAgoAreCold) {
  // A (16 MiB) read by op 0 and op 2 with B (40 MiB) in between; the
  // iteration repeats, so op 0 sees A last touched by op 2 (16 MiB ago).
  const core::Node n0 = opNode("aten::relu", {mibTensor(16, 1)}, {mibTensor(0, 9)});
  const core::Node n1 = opNode("aten::relu", {mibTensor(40, 2)}, {});
  const core::Node n2 = opNode("aten::relu", {mibTensor(16, 1)}, {});
  const std::vector<ColdBytes> cold = coldBytes({&n0, &n1, &n2}, 32.0 * kMiB);
  ASSERT_EQ(cold.size(), 3u);
  EXPECT_EQ(cold[0].inputs, 0.0);                           // 16 MiB since op 2: still cached
  EXPECT_EQ(cold[1].inputs, 40.0 * kMiB);                   // 72 MiB since its last use
  EXPECT_EQ(cold[2].inputs, 16.0 * kMiB);                   // 56 MiB since op 0
  EXPECT_EQ(coldBytes({&n0, &n1, &n2}, 0)[1].inputs, 0.0);  // no cache size: nothing marked
}

TEST(CacheReuse, ThePartOfATensorThatOutlivesTheTrafficSinceItsLastTouchIsHot) {
  // A (16 MiB) read by op 0 and op 2 with B (8 MiB) in between, against a
  // 20 MiB cache: when op 2 reads A, 8 MiB of other traffic came after A's
  // 16, so the first 4 MiB of A were evicted and the last 12 are cached.
  const core::Node n0 = opNode("aten::relu", {mibTensor(16, 1)}, {});
  const core::Node n1 = opNode("aten::relu", {mibTensor(8, 2)}, {});
  const core::Node n2 = opNode("aten::add_", {mibTensor(16, 1), mibTensor(2, 3)}, {mibTensor(16, 1)});
  const std::vector<ColdBytes> cold = coldBytes({&n0, &n1, &n2}, 20.0 * kMiB);
  // A: 4 MiB; C (2 MiB): 40 MiB since op 2 of the last iteration, all cold.
  EXPECT_EQ(cold[2].inputs, 4.0 * kMiB + 2.0 * kMiB);
  EXPECT_DOUBLE_EQ(cold[2].input_tensors, 0.25 + 1.0);  // a quarter of A, all of C
  // A again, as op 2's in-place output: touched by this op already, and no
  // traffic either (op 0 finds only C's 2 MiB after A's last touch).
  EXPECT_EQ(cold[2].outputs, 0.0);
  EXPECT_EQ(cold[0].inputs, 0.0);
  EXPECT_EQ(cold[1].inputs, 8.0 * kMiB);  // 34 MiB since op 1 of the last iteration
}

TEST(CacheReuse, SmallWorkingSetsStayHot) {
  const core::Node a = opNode("aten::add_", {mibTensor(1, 1), mibTensor(1, 2)}, {mibTensor(1, 1)});
  const core::Node b = opNode("aten::mul_", {mibTensor(1, 2), mibTensor(1, 3)}, {mibTensor(1, 2)});
  for (const ColdBytes& c : coldBytes({&a, &b, &a, &b}, 32.0 * kMiB)) {
    EXPECT_EQ(c.inputs, 0.0);
    EXPECT_EQ(c.outputs, 0.0);
  }
}

TEST(CacheReuse, OutputsOnMemoryLastTouchedLongAgoAreCold) {
  // Op 0 writes G (8 MiB, a gradient the allocator hands out on the same
  // storage every iteration), op 1 reads it into a fresh 1 MiB tensor, op 2
  // streams 40 MiB.
  const core::Node n0 = opNode("aten::zero_", {}, {mibTensor(8, 1)});
  const core::Node n1 = opNode("aten::add", {mibTensor(8, 1)}, {mibTensor(1, 3)});
  const core::Node n2 = opNode("aten::relu", {mibTensor(40, 2)}, {});
  const std::vector<ColdBytes> cold = coldBytes({&n0, &n1, &n2}, 32.0 * kMiB);
  EXPECT_EQ(cold[0].outputs, 8.0 * kMiB);  // 49 MiB of traffic since op 1 read it
  EXPECT_EQ(cold[1].inputs, 0.0);          // 8 MiB since op 0 wrote it
  EXPECT_EQ(cold[1].outputs, 1.0 * kMiB);  // 57 MiB since op 1 wrote it last iteration
  EXPECT_EQ(cold[2].inputs, 25.0 * kMiB);  // 17 MiB since its last touch: 15 of 40 cached
  EXPECT_EQ(cold[2].outputs, 0.0);
}

TEST(CacheReuse, AnAllocationTakesTheBlockFreedLastOfItsSize) {
  // Two 8 MiB gradients on their own storages, each read by an add_ into a
  // persistent 8 MiB buffer and then freed; a 40 MiB stream ends the step.
  // The allocator gives the second gradient the first one's block, which its
  // add_ just read: hot. The first takes the second's block, freed a step
  // of traffic ago: cold.
  const core::Node g1 = opNode("aten::_embedding_bag_backward", {}, {mibTensor(8, 1)});
  const core::Node a1 = opNode("aten::add_", {mibTensor(8, 9), mibTensor(8, 1)}, {mibTensor(8, 9)});
  const core::Node g2 = opNode("aten::_embedding_bag_backward", {}, {mibTensor(8, 2)});
  const core::Node a2 = opNode("aten::add_", {mibTensor(8, 9), mibTensor(8, 2)}, {mibTensor(8, 9)});
  const core::Node stream = opNode("aten::relu", {mibTensor(40, 3)}, {});
  const std::vector<ColdBytes> cold = coldBytes({&g1, &a1, &g2, &a2, &stream}, 32.0 * kMiB);
  EXPECT_EQ(cold[0].outputs, 8.0 * kMiB);  // 8 + 40 MiB since the block's last read
  EXPECT_EQ(cold[2].outputs, 0.0);         // 8 MiB since a1 read the block
  // A size no block was freed in: the storage's own last touch, a step ago.
  const core::Node g3 = opNode("aten::_embedding_bag_backward", {}, {mibTensor(4, 4)});
  const std::vector<ColdBytes> other = coldBytes({&g1, &a1, &g3, &stream}, 32.0 * kMiB);
  EXPECT_EQ(other[2].outputs, 4.0 * kMiB);
}

}  // namespace
}  // namespace tracetwin::predictors
