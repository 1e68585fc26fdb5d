#include "replay/caching_cpu_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <mutex>

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

// c10::Allocator changed under us: LibTorch 1.13 (Debian's) declares
// allocate const and has no copy_data; 2.x declares allocate non-const and
// copy_data pure. Both allocate signatures are defined, each overriding
// where its LibTorch declares it, so no `override` (it would not compile on
// the other side).
class CachingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t bytes) const { return allocateCached(bytes); }
  c10::DataPtr allocate(size_t bytes) { return allocateCached(bytes); }
  void copy_data(void* dest, const void* src, size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const { return &giveBack; }
};

// Above c10's own registration (0), so that a later registration at the
// default priority does not take the tensors' memory back from the cache.
constexpr uint8_t kPriority = 1;

std::mutex install_mutex;
bool installed = false;
c10::Allocator* previous = nullptr;

}  // namespace

void installCachingCpuAllocator() {
  std::lock_guard<std::mutex> lock(install_mutex);
  if (installed) return;
  static CachingCpuAllocator allocator;
  previous = c10::GetCPUAllocator();
  c10::SetCPUAllocator(&allocator, kPriority);
  installed = true;
}

void uninstallCachingCpuAllocator() {
  std::lock_guard<std::mutex> lock(install_mutex);
  if (!installed) return;
  c10::SetCPUAllocator(previous, kPriority);
  installed = false;
  cpuSizeCache().releaseCached();
}

SizeCacheStats cpuSizeCacheStats() { return cpuSizeCache().stats(); }

}  // namespace tracetwin::replay
