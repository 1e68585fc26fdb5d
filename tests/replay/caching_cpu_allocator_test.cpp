// calibrate's CPU allocator (replay/caching_cpu_allocator.h) as LibTorch sees
// it: tensors of a size freed and made again get the same memory, the
// allocator before it comes back on uninstall, and a tensor made under the
// cache and freed after the uninstall still goes back through it.
#include "replay/caching_cpu_allocator.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

namespace tracetwin::replay {
namespace {

// Installs for one test and always puts the previous allocator back: the
// other tests of this process allocate through c10 too.
class CachingCpuAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = c10::GetCPUAllocator();
    installCachingCpuAllocator();
  }
  void TearDown() override { uninstallCachingCpuAllocator(); }
  c10::Allocator* before_ = nullptr;
};

TEST_F(CachingCpuAllocatorTest, ATensorOfASizeMadeAgainGetsTheMemoryFreedBefore) {
  ASSERT_NE(c10::GetCPUAllocator(), before_);
  const int64_t hits_before = cpuSizeCacheStats().hits;
  const void* first = nullptr;
  {
    const at::Tensor t = at::ones({1 << 18});  // 1 MiB, freed at the brace
    first = t.data_ptr();
  }
  const at::Tensor again = at::ones({1 << 18});
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_GE(cpuSizeCacheStats().hits - hits_before, 1);
  EXPECT_EQ(again.sum().item<float>(), float(1 << 18))
      << "the reused memory holds this tensor's values";
}

TEST_F(CachingCpuAllocatorTest, AnEmptyTensorHasNoBlock) {
  const SizeCacheStats before = cpuSizeCacheStats();
  const at::Tensor empty = at::empty({0});
  EXPECT_EQ(empty.data_ptr(), nullptr);
  EXPECT_EQ(cpuSizeCacheStats().misses, before.misses);
  EXPECT_EQ(cpuSizeCacheStats().hits, before.hits);
}

TEST(CachingCpuAllocatorInstall, UninstallPutsThePreviousAllocatorBack) {
  c10::Allocator* before = c10::GetCPUAllocator();
  installCachingCpuAllocator();
  installCachingCpuAllocator();  // idempotent
  at::Tensor made_under_the_cache = at::ones({4096});
  const size_t live = cpuSizeCacheStats().live_bytes;
  EXPECT_GE(live, 4096 * sizeof(float));
  uninstallCachingCpuAllocator();
  EXPECT_EQ(c10::GetCPUAllocator(), before);
  EXPECT_EQ(cpuSizeCacheStats().cached_bytes, 0u) << "its cached blocks went back to c10";
  made_under_the_cache = at::Tensor();  // freed through the cache, after it was uninstalled
  EXPECT_EQ(cpuSizeCacheStats().live_bytes, live - 4096 * sizeof(float));
}

}  // namespace
}  // namespace tracetwin::replay
