#include "replay/fresh_mapping_cpu_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "replay/cpu_allocator_hook.h"

namespace tracetwin::replay {
namespace {

std::atomic<size_t> threshold{0};
std::atomic<size_t> mapped_count{0};

// The length of each live mapping, for munmap. Small tensors are not here:
// the one deleter (raw_deleter must be one function) tells them apart by it.
std::mutex mappings_mutex;
std::unordered_map<void*, size_t>& liveMappings() {
  // Never destroyed: a tensor freed during static destruction still looks.
  static auto* mappings = new std::unordered_map<void*, size_t>();
  return *mappings;
}

// A mapping starts on a page boundary (4 KiB at least); c10's 64-byte
// aligned heap blocks rarely do, so most frees of the replay loop skip the
// lock and the lookup.
constexpr uintptr_t kPageMask = 4095;

void release(void* block) {
  if (block == nullptr) return;
  if ((reinterpret_cast<uintptr_t>(block) & kPageMask) != 0) {
    c10::free_cpu(block);
    return;
  }
  size_t length = 0;
  {
    std::lock_guard<std::mutex> lock(mappings_mutex);
    auto it = liveMappings().find(block);
    if (it != liveMappings().end()) {
      length = it->second;
      liveMappings().erase(it);
    }
  }
  if (length == 0) {
    c10::free_cpu(block);
    return;
  }
  munmap(block, length);
}

c10::DataPtr allocateTensorMemory(size_t bytes) {
  const c10::Device cpu(c10::DeviceType::CPU);
  if (bytes == 0) return {nullptr, nullptr, &release, cpu};
  if (bytes < threshold.load()) {
    void* block = c10::alloc_cpu(bytes);
    return {block, block, &release, cpu};
  }
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  TORCH_CHECK(block != MAP_FAILED, "tracetwin's fresh-mapping CPU allocator: mapping ", bytes,
              " bytes failed: ", std::strerror(errno));
  {
    std::lock_guard<std::mutex> lock(mappings_mutex);
    liveMappings().emplace(block, bytes);
  }
  mapped_count.fetch_add(1);
  return {block, block, &release, cpu};
}

CpuAllocatorHook& freshMappingHook() {
  static FunctionCpuAllocator<&allocateTensorMemory, &release> allocator;
  static CpuAllocatorHook hook(&allocator);
  return hook;
}

}  // namespace

void installFreshMappingCpuAllocator(size_t threshold_bytes) {
  threshold.store(threshold_bytes);  // before the install: no tensor sees 0
  freshMappingHook().install();
}

void uninstallFreshMappingCpuAllocator() { freshMappingHook().uninstall(); }

size_t freshMappedTensors() { return mapped_count.load(); }

}  // namespace tracetwin::replay
