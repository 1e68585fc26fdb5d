// `--malloc pinned`'s CPU allocator (replay/fresh_mapping_cpu_allocator.h):
// a tensor past the threshold faults in its pages every time it is made, even
// where glibc's heap holds a free chunk that would have served it, and
// smaller tensors still come from the heap.
#include "replay/fresh_mapping_cpu_allocator.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "replay/page_faults.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tracetwin::replay {
namespace {

constexpr size_t kThreshold = size_t{32} << 20;
constexpr int64_t kBigFloats = int64_t{40} << 18;  // 40 MiB
constexpr int64_t kBigPages = (int64_t{40} << 20) / 4096;

// Leaves glibc's heap with 200 MiB free, every page of it written: pinned's
// thresholds (no trimming below 1 GiB), then 100 blocks of 2 MiB made,
// written and freed, which coalesce. (With 48-60 MiB free, glibc 2.36 still
// mapped a 40 MiB request.)
void leaveABigFreeChunkInTheHeap() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, int(kThreshold));
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) {
    blocks.push_back(std::malloc(size_t{2} << 20));
    std::memset(blocks.back(), 1, size_t{2} << 20);
  }
  for (void* block : blocks) std::free(block);
}

// Minor page faults of making a 40 MiB tensor and writing every page of it.
int64_t faultsOfABigTensor() {
  const int64_t before = minorPageFaults();
  at::Tensor big = at::empty({kBigFloats});
  big.fill_(1.0f);
  return minorPageFaults() - before;
}

class FreshMappingCpuAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(__linux__) || !defined(__GLIBC__)
    GTEST_SKIP() << "page faults and glibc's heap are Linux's";
#endif
  }
  void TearDown() override { uninstallFreshMappingCpuAllocator(); }
};

// The case that made launches of one trace differ: without this allocator
// the heap's free chunk serves the tensor and nothing faults after the first
// time.
TEST_F(FreshMappingCpuAllocatorTest, ABigTensorFaultsEveryTimeThoughTheHeapCouldServeIt) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator has no glibc heap to serve it (the control)";
#endif
  leaveABigFreeChunkInTheHeap();
  faultsOfABigTensor();  // the heap's chunk written once
  EXPECT_LT(faultsOfABigTensor(), kBigPages / 4) << "glibc served it from the heap (the control)";
  installFreshMappingCpuAllocator(kThreshold);
  const size_t mapped_before = freshMappedTensors();
  for (int call = 0; call < 2; ++call)
    EXPECT_GE(faultsOfABigTensor(), kBigPages) << "call " << call;
  EXPECT_EQ(freshMappedTensors() - mapped_before, 2u);
}

TEST_F(FreshMappingCpuAllocatorTest, SmallTensorsComeFromTheHeapAndHoldTheirValues) {
  installFreshMappingCpuAllocator(kThreshold);
  const size_t mapped_before = freshMappedTensors();
  const at::Tensor small = at::ones({1 << 18});  // 1 MiB
  EXPECT_EQ(small.sum().item<float>(), float(1 << 18));
  EXPECT_EQ(freshMappedTensors(), mapped_before);
  at::Tensor big = at::ones({kBigFloats});
  EXPECT_EQ(big.sum().item<float>(), float(kBigFloats));
  EXPECT_EQ(freshMappedTensors(), mapped_before + 1);
  EXPECT_EQ(at::empty({0}).data_ptr(), nullptr);
}

TEST(FreshMappingCpuAllocatorInstall, UninstallPutsThePreviousAllocatorBack) {
  c10::Allocator* before = c10::GetCPUAllocator();
  installFreshMappingCpuAllocator(kThreshold);
  installFreshMappingCpuAllocator(kThreshold);  // idempotent
  EXPECT_NE(c10::GetCPUAllocator(), before);
  at::Tensor mapped_under_it = at::ones({kBigFloats});
  uninstallFreshMappingCpuAllocator();
  EXPECT_EQ(c10::GetCPUAllocator(), before);
  EXPECT_EQ(mapped_under_it.sum().item<float>(), float(kBigFloats));
  mapped_under_it = at::Tensor();  // unmapped through it, after the uninstall
}

}  // namespace
}  // namespace tracetwin::replay
