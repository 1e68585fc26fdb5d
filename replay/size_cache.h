// Freed memory kept by size and handed back to the next request of the same
// size, the way the CUDA caching allocator serves a GPU step. Calibration
// replays the same op on the same shapes many times; under glibc each of its
// large outputs either maps fresh pages in every call (at or above the mmap
// threshold) or, with mmap off, comes from a heap that posix_memalign
// fragments until a freed chunk of the same tensor no longer fits: a 64 MiB
// bmm output faulted its 16,384 pages in 9 of 12 repeats (184-191 ms against
// 6.3-6.6 ms), and the kernel models learned the faults the predictor charges
// separately (predictors/host/fresh_pages.h). A repeat served from this
// cache writes pages it has already written.
//
// Exact sizes only: a unit's repeats ask for the same sizes again, and a
// block handed to a smaller request would keep its spare pages out of use.
// What is cached is bounded: past the capacity the blocks freed longest ago
// go back to the source (a calibration moves on through its grid's sizes and
// never asks for most of them again). Torch-free; the LibTorch allocator
// around it is replay/caching_cpu_allocator.h. Thread-safe: ATen's intra-op
// threads allocate too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <unordered_map>

namespace tracetwin::replay {

// Where blocks come from and go back to (c10::alloc_cpu and free_cpu in the
// allocator; fakes in tests). `allocate` returns nullptr when it cannot.
struct BlockSource {
  void* (*allocate)(size_t bytes) = nullptr;
  void (*release)(void* block) = nullptr;
};

struct SizeCacheStats {
  int64_t hits = 0;     // requests served from the cache
  int64_t misses = 0;   // requests the source served
  int64_t evicted = 0;  // cached blocks given back to make room
  size_t cached_bytes = 0;
  size_t peak_cached_bytes = 0;
  size_t live_bytes = 0;  // handed out and not yet given back
};

class SizeCache {
 public:
  SizeCache(size_t capacity_bytes, BlockSource source);
  ~SizeCache();
  SizeCache(const SizeCache&) = delete;
  SizeCache& operator=(const SizeCache&) = delete;

  // A block of at least `bytes` (a cached one of exactly that size if any,
  // the most recently freed: its lines are the likeliest to be in cache).
  // When the source fails, every cached block goes back and it is asked
  // again; nullptr if it fails then too. nullptr for 0 bytes.
  void* take(size_t bytes);
  // Back into the cache; a block this cache did not hand out is refused with
  // std::invalid_argument (it would be freed into the wrong allocator).
  void give(void* block);
  // Every cached block back to the source.
  void releaseCached();

  SizeCacheStats stats() const;

 private:
  struct Cached {
    void* block;
    size_t bytes;
  };
  using Age = std::list<Cached>;  // front: freed longest ago

  void evictOldestLocked();
  void releaseCachedLocked();

  const size_t capacity_bytes_;
  const BlockSource source_;
  mutable std::mutex mutex_;
  Age by_age_;
  // Per size, its cached blocks oldest first (positions in by_age_).
  std::unordered_map<size_t, std::deque<Age::iterator>> by_size_;
  std::unordered_map<void*, size_t> live_;
  SizeCacheStats stats_;
};

}  // namespace tracetwin::replay
