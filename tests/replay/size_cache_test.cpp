// The size cache under calibrate's CPU allocator (replay/size_cache.h):
// reuse by exact size, the newest block first, eviction of the blocks freed
// longest ago past the capacity, and a source that runs out. A fake source
// counts what it hands out and takes back.
#include "replay/size_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>

namespace tracetwin::replay {
namespace {

// What the fake source did; reset before each test (SizeCacheTest::SetUp).
struct SourceLog {
  int allocations = 0;
  std::set<void*> released;
  bool exhausted = false;  // refuses every request while set
  int refusals = 0;
};
SourceLog source_log;

void* fakeAllocate(size_t bytes) {
  if (source_log.exhausted) {
    ++source_log.refusals;
    return nullptr;
  }
  ++source_log.allocations;
  return std::malloc(bytes);
}

void fakeRelease(void* block) {
  source_log.released.insert(block);
  std::free(block);
}

class SizeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { source_log = SourceLog{}; }
  static BlockSource fake() { return BlockSource{&fakeAllocate, &fakeRelease}; }
};

TEST_F(SizeCacheTest, AFreedBlockServesTheNextRequestOfItsSize) {
  SizeCache cache(1 << 20, fake());
  void* first = cache.take(4096);
  cache.give(first);
  EXPECT_EQ(cache.take(4096), first);
  EXPECT_EQ(source_log.allocations, 1);
  const SizeCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.live_bytes, 4096u);
  EXPECT_EQ(s.cached_bytes, 0u);
  cache.give(first);
}

TEST_F(SizeCacheTest, OtherSizesGetBlocksOfTheirOwn) {
  SizeCache cache(1 << 20, fake());
  void* small = cache.take(4096);
  cache.give(small);
  void* other = cache.take(4095);  // one byte less: not served by the 4096 block
  EXPECT_NE(other, small);
  EXPECT_EQ(source_log.allocations, 2);
  EXPECT_EQ(cache.stats().cached_bytes, 4096u);
  cache.give(other);
}

TEST_F(SizeCacheTest, TheMostRecentlyFreedBlockOfASizeComesFirst) {
  SizeCache cache(1 << 20, fake());
  void* a = cache.take(1000);
  void* b = cache.take(1000);
  cache.give(a);
  cache.give(b);
  EXPECT_EQ(cache.take(1000), b);
  EXPECT_EQ(cache.take(1000), a);
  cache.give(a);
  cache.give(b);
}

TEST_F(SizeCacheTest, PastTheCapacityTheBlocksFreedLongestAgoGoBack) {
  SizeCache cache(3000, fake());
  void* a = cache.take(1000);
  void* b = cache.take(1000);
  void* c = cache.take(2000);
  cache.give(a);  // cached 1000
  cache.give(b);  // 2000
  cache.give(c);  // 4000 > 3000: a goes back, 3000 stays
  EXPECT_EQ(source_log.released, (std::set<void*>{a}));
  SizeCacheStats s = cache.stats();
  EXPECT_EQ(s.cached_bytes, 3000u);
  EXPECT_EQ(s.peak_cached_bytes, 4000u);
  EXPECT_EQ(s.evicted, 1);
  // b is still there, and served; the next 1000-byte request goes to the source.
  EXPECT_EQ(cache.take(1000), b);
  void* d = cache.take(1000);
  EXPECT_EQ(source_log.allocations, 4);
  cache.give(b);
  cache.give(d);  // 2000 + 1000 + 1000 > 3000: c, freed longest ago, goes back
  EXPECT_EQ(source_log.released, (std::set<void*>{a, c}));
  EXPECT_EQ(cache.stats().cached_bytes, 2000u);
}

TEST_F(SizeCacheTest, ABlockLargerThanTheCapacityGoesStraightBack) {
  SizeCache cache(1000, fake());
  void* big = cache.take(5000);
  cache.give(big);
  EXPECT_EQ(source_log.released, (std::set<void*>{big}));
  EXPECT_EQ(cache.stats().cached_bytes, 0u);
}

TEST_F(SizeCacheTest, WhenTheSourceRunsOutTheCachedBlocksGoBackAndItIsAskedAgain) {
  SizeCache cache(1 << 20, fake());
  void* a = cache.take(1000);
  cache.give(a);
  source_log.exhausted = true;
  EXPECT_EQ(cache.take(2000), nullptr);
  EXPECT_EQ(source_log.refusals, 2) << "asked, released the cache, asked again";
  EXPECT_EQ(source_log.released, (std::set<void*>{a}));
  EXPECT_EQ(cache.stats().cached_bytes, 0u);
  source_log.exhausted = false;
  void* b = cache.take(2000);
  ASSERT_NE(b, nullptr);
  cache.give(b);
}

TEST_F(SizeCacheTest, ZeroBytesIsNoBlock) {
  SizeCache cache(1 << 20, fake());
  EXPECT_EQ(cache.take(0), nullptr);
  cache.give(nullptr);
  EXPECT_EQ(source_log.allocations, 0);
}

TEST_F(SizeCacheTest, ABlockItDidNotHandOutIsRefused) {
  SizeCache cache(1 << 20, fake());
  int not_ours = 0;
  EXPECT_THROW(cache.give(&not_ours), std::invalid_argument);
  void* a = cache.take(64);
  cache.give(a);
  EXPECT_THROW(cache.give(a), std::invalid_argument) << "given back twice";
}

TEST_F(SizeCacheTest, DestructionReturnsTheCachedBlocks) {
  void* a = nullptr;
  {
    SizeCache cache(1 << 20, fake());
    a = cache.take(64);
    cache.give(a);
  }
  EXPECT_EQ(source_log.released, (std::set<void*>{a}));
}

TEST_F(SizeCacheTest, ASourceWithoutBothFunctionsIsRefused) {
  EXPECT_THROW(SizeCache(1, BlockSource{&fakeAllocate, nullptr}), std::invalid_argument);
}

}  // namespace
}  // namespace tracetwin::replay
