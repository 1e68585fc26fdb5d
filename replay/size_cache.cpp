#include "replay/size_cache.h"

#include <algorithm>
#include <stdexcept>

namespace tracetwin::replay {

SizeCache::SizeCache(size_t capacity_bytes, BlockSource source)
    : capacity_bytes_(capacity_bytes), source_(source) {
  if (source_.allocate == nullptr || source_.release == nullptr)
    throw std::invalid_argument("SizeCache: a block source needs both allocate and release");
}

SizeCache::~SizeCache() {
  // Live blocks stay with their owners: the allocator that owns this cache
  // lives as long as the process, so that tensors freed late still find it.
  releaseCached();
}

void* SizeCache::take(size_t bytes) {
  if (bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto same_size = by_size_.find(bytes);
  if (same_size != by_size_.end() && !same_size->second.empty()) {
    const Age::iterator newest = same_size->second.back();
    same_size->second.pop_back();
    if (same_size->second.empty()) by_size_.erase(same_size);
    void* block = newest->block;
    by_age_.erase(newest);
    stats_.cached_bytes -= bytes;
    ++stats_.hits;
    live_.emplace(block, bytes);
    stats_.live_bytes += bytes;
    return block;
  }
  void* block = source_.allocate(bytes);
  if (block == nullptr && !by_age_.empty()) {
    releaseCachedLocked();
    block = source_.allocate(bytes);
  }
  if (block == nullptr) return nullptr;
  ++stats_.misses;
  live_.emplace(block, bytes);
  stats_.live_bytes += bytes;
  return block;
}

void SizeCache::give(void* block) {
  if (block == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto live = live_.find(block);
  if (live == live_.end())
    throw std::invalid_argument("SizeCache: a block it did not hand out was given back");
  const size_t bytes = live->second;
  live_.erase(live);
  stats_.live_bytes -= bytes;
  by_size_[bytes].push_back(by_age_.insert(by_age_.end(), Cached{block, bytes}));
  stats_.cached_bytes += bytes;
  stats_.peak_cached_bytes = std::max(stats_.peak_cached_bytes, stats_.cached_bytes);
  while (stats_.cached_bytes > capacity_bytes_) evictOldestLocked();
}

void SizeCache::releaseCached() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseCachedLocked();
}

SizeCacheStats SizeCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void SizeCache::evictOldestLocked() {
  const Cached oldest = by_age_.front();
  // Blocks of one size enter in the order they were freed and leave from
  // the back, so the oldest of all is the front of its size's queue.
  auto same_size = by_size_.find(oldest.bytes);
  same_size->second.pop_front();
  if (same_size->second.empty()) by_size_.erase(same_size);
  by_age_.pop_front();
  stats_.cached_bytes -= oldest.bytes;
  ++stats_.evicted;
  source_.release(oldest.block);
}

void SizeCache::releaseCachedLocked() {
  for (const Cached& c : by_age_) source_.release(c.block);
  by_age_.clear();
  by_size_.clear();
  stats_.cached_bytes = 0;
}

}  // namespace tracetwin::replay
