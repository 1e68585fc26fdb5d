// What the replay's own LibTorch CPU allocators share (caching_cpu_allocator.h,
// fresh_mapping_cpu_allocator.h): a c10::Allocator made of one allocate
// function and one deleter, and putting it in place of the process's CPU
// allocator and back.
#pragma once

#include <c10/core/CPUAllocator.h>

#include <cstring>
#include <mutex>

namespace tracetwin::replay {

// c10::Allocator changed under us: LibTorch 1.13 (Debian's) declares
// allocate const and has no copy_data; 2.x declares allocate non-const and
// copy_data pure. Both allocate signatures are defined, each overriding
// where its LibTorch declares it, so no `override` (it would not compile on
// the other side). One deleter for every block: raw_allocate hands blocks to
// raw_deleter.
template <c10::DataPtr (*Allocate)(size_t), c10::DeleterFnPtr Release>
class FunctionCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t bytes) const { return Allocate(bytes); }
  c10::DataPtr allocate(size_t bytes) { return Allocate(bytes); }
  void copy_data(void* dest, const void* src, size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const { return Release; }
};

// One allocator's place as the CPU allocator: install() is idempotent and
// uninstall() puts back the allocator found at the first install. Above c10's
// own registration (priority 0), so that a later registration at the default
// priority does not take the tensors' memory back.
class CpuAllocatorHook {
 public:
  explicit CpuAllocatorHook(c10::Allocator* allocator) : allocator_(allocator) {}
  // False when it was in place already.
  bool install() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (installed_) return false;
    previous_ = c10::GetCPUAllocator();
    c10::SetCPUAllocator(allocator_, kPriority);
    installed_ = true;
    return true;
  }
  // False when it was not in place.
  bool uninstall() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!installed_) return false;
    c10::SetCPUAllocator(previous_, kPriority);
    installed_ = false;
    return true;
  }

 private:
  static constexpr uint8_t kPriority = 1;
  c10::Allocator* allocator_;
  std::mutex mutex_;
  bool installed_ = false;
  c10::Allocator* previous_ = nullptr;
};

}  // namespace tracetwin::replay
