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

// Both allocate signatures, as in caching_cpu_allocator.cpp: LibTorch 1.13
// declares it const, 2.x not, and copy_data is pure in 2.x only.
class FreshMappingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t bytes) const { return allocateTensorMemory(bytes); }
  c10::DataPtr allocate(size_t bytes) { return allocateTensorMemory(bytes); }
  void copy_data(void* dest, const void* src, size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const { return &release; }
};

// Above c10's own registration (0), as the caching allocator.
constexpr uint8_t kPriority = 1;

std::mutex install_mutex;
bool installed = false;
c10::Allocator* previous = nullptr;

}  // namespace

void installFreshMappingCpuAllocator(size_t threshold_bytes) {
  std::lock_guard<std::mutex> lock(install_mutex);
  if (installed) return;
  static FreshMappingCpuAllocator allocator;
  threshold.store(threshold_bytes);
  previous = c10::GetCPUAllocator();
  c10::SetCPUAllocator(&allocator, kPriority);
  installed = true;
}

void uninstallFreshMappingCpuAllocator() {
  std::lock_guard<std::mutex> lock(install_mutex);
  if (!installed) return;
  c10::SetCPUAllocator(previous, kPriority);
  installed = false;
}

size_t freshMappedTensors() { return mapped_count.load(); }

}  // namespace tracetwin::replay
