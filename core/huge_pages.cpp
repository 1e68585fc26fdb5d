#include "core/huge_pages.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#if defined(__linux__) && defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#define TRACETWIN_HUGE_PAGE_HEAP 1
#endif

namespace tracetwin::core {
namespace {

#ifdef TRACETWIN_HUGE_PAGE_HEAP
constexpr uintptr_t kHugePageBytes = uintptr_t{2} << 20;
constexpr uintptr_t kPageBytes = 4096;
// glibc's M_TOP_PAD when nobody set it (mallopt(3)).
constexpr int kDefaultTopPad = 128 * 1024;
// The heap grows in blocks of this size below the mmap threshold (128 KiB
// at start-up) until malloc has to take more from the kernel.
constexpr size_t kNudgeBytes = 64 * 1024;
constexpr int kMaxNudges = 64;

std::atomic<bool> g_allowed{false};
std::atomic<bool> g_heap_in_use{false};

// "always [madvise] never": huge pages for marked regions (or all of them).
bool hugePagesAdvisable() {
  static const bool advisable = [] {
    std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == nullptr) return false;
    char text[128] = {};
    const size_t n = std::fread(text, 1, sizeof text - 1, f);
    std::fclose(f);
    text[n] = '\0';
    return std::strstr(text, "[madvise]") != nullptr || std::strstr(text, "[always]") != nullptr;
  }();
  return advisable;
}

char* heapEnd() { return static_cast<char*>(sbrk(0)); }  // glibc: no system call
#endif

}  // namespace

void allowHugePageHeap() {
#ifdef TRACETWIN_HUGE_PAGE_HEAP
  g_allowed = true;
#endif
}

void adviseHugePages(void* p, size_t bytes) {
#ifdef TRACETWIN_HUGE_PAGE_HEAP
  if (!g_allowed || p == nullptr || bytes < 2 * kHugePageBytes || !hugePagesAdvisable()) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHugePageBytes - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

HugePageHeap::HugePageHeap(uint64_t expected_bytes) {
#ifdef TRACETWIN_HUGE_PAGE_HEAP
  if (!g_allowed || expected_bytes < kMinBytes || !hugePagesAdvisable()) return;
  bool in_use = false;
  if (!g_heap_in_use.compare_exchange_strong(in_use, true)) return;
  active_ = true;
  const uint64_t pad = expected_bytes < (uint64_t{1} << 30) ? expected_bytes : uint64_t{1} << 30;
  mallopt(M_TOP_PAD, static_cast<int>(pad));
  // Make malloc grow the heap now, by the pad, so that it is marked before
  // anything touches it: take blocks off the top of the heap until the
  // heap's end moves, then give them back (they merge into the new top).
  char* const before = heapEnd();
  void* held[kMaxNudges];
  int n = 0;
  while (n < kMaxNudges && heapEnd() == before) {
    held[n] = malloc(kNudgeBytes);
    if (held[n] == nullptr) break;
    ++n;
  }
  for (int i = 0; i < n; ++i) free(held[i]);
  advised_end_ = before;
  advise();
#else
  (void)expected_bytes;
#endif
}

void HugePageHeap::advise() {
#ifdef TRACETWIN_HUGE_PAGE_HEAP
  if (!active_) return;
  char* const end = heapEnd();
  if (end <= advised_end_) return;
  // From the first whole page after the last mark: its own 2 MiB-aligned
  // spans fault in huge pages; a span the old end was inside stays small.
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(advised_end_) + kPageBytes - 1) & ~(kPageBytes - 1);
  const uintptr_t stop = reinterpret_cast<uintptr_t>(end) & ~(kPageBytes - 1);
  if (stop > begin) madvise(reinterpret_cast<void*>(begin), stop - begin, MADV_HUGEPAGE);
  advised_end_ = end;
#endif
}

HugePageHeap::~HugePageHeap() {
#ifdef TRACETWIN_HUGE_PAGE_HEAP
  if (!active_) return;
  mallopt(M_TOP_PAD, kDefaultTopPad);
  g_heap_in_use = false;
#endif
}

}  // namespace tracetwin::core
