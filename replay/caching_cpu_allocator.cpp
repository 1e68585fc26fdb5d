#include "replay/caching_cpu_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#include "replay/cpu_allocator_hook.h"

namespace tracetwin::replay {
namespace {

// c10's own allocation: its alignment and its options (NUMA placement,
// fill flags); nullptr where it throws, so that the cache can release what
// it holds and ask again.
void* allocateFromC10(size_t bytes) {
  try {
    return c10::alloc_cpu(bytes);
  } catch (const c10::Error&) {
    return nullptr;
  }
}

SizeCache& cpuSizeCache() {
  // Never destroyed: a tensor freed during static destruction still gives
  // its block back.
  static auto* cache =
      new SizeCache(kCpuSizeCacheBytes, BlockSource{&allocateFromC10, &c10::free_cpu});
  return *cache;
}

void giveBack(void* block) { cpuSizeCache().give(block); }

c10::DataPtr allocateCached(size_t bytes) {
  if (bytes == 0) return {nullptr, nullptr, &giveBack, c10::Device(c10::DeviceType::CPU)};
  void* block = cpuSizeCache().take(bytes);
  TORCH_CHECK(block != nullptr, "tracetwin's caching CPU allocator: out of memory allocating ",
              bytes, " bytes (the cache's blocks were released first)");
  return {block, block, &giveBack, c10::Device(c10::DeviceType::CPU)};
}

CpuAllocatorHook& cachingHook() {
  static FunctionCpuAllocator<&allocateCached, &giveBack> allocator;
  static CpuAllocatorHook hook(&allocator);
  return hook;
}

}  // namespace

void installCachingCpuAllocator() { cachingHook().install(); }

void uninstallCachingCpuAllocator() {
  if (cachingHook().uninstall()) cpuSizeCache().releaseCached();
}

SizeCacheStats cpuSizeCacheStats() { return cpuSizeCache().stats(); }

}  // namespace tracetwin::replay
