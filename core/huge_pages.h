// Transparent huge pages for the memory a big trace's Graph is built in.
//
// Building the Graph of a 27 MB trace touches ~50 MB of fresh memory: ~13.5k
// page faults, ~27% of `tracetwin inspect`'s CPU (the kernel zeroes, charges
// and maps each 4 KiB page on first touch). This host's THP mode is
// "madvise": regions marked MADV_HUGEPAGE fault in 2 MiB at a time (~1.6k
// faults for the same trace). Two kinds of region hold the Graph:
//  - big single blocks (the Node array): adviseHugePages() on the block;
//  - the heap that glibc's malloc carves every small block from (Values,
//    tensors, shapes, strings): HugePageHeap grows it once by about what
//    the Graph will take and marks the growth, for as long as it lives.
// Both are hints: where THP is off, malloc is not glibc's (sanitizers), or
// madvise fails, memory is what it was and nothing else changes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracetwin::core {

// Both are opt-in, for the torch-free one-shot commands (inspect, predict)
// to call before they read; elsewhere they do nothing:
//  - the heap part changes a process-wide malloc setting: any mallopt() of
//    the heap's growth step freezes glibc's mmap threshold where it is (it
//    otherwise rises as big blocks are freed), which would change how
//    LibTorch's tensors are allocated in a replay;
//  - a huge page is resident whole: the last, partly used one of each
//    region costs up to 2 MiB of peak RSS (+4-6 MiB for `inspect` of the
//    27 MB trace: 61.3 -> 65.8 MiB), a trade the library's other users
//    (sweeps reading many traces, 8-rank predictions) need not make.
void allowHugePageHeap();

// Marks the 2 MiB-aligned part of [p, p + bytes) for huge pages, once
// allowHugePageHeap() was called. For blocks of at least a few MiB that are
// not touched yet (fresh capacity).
void adviseHugePages(void* p, size_t bytes);

// While it lives, the main heap grows by at least `expected_bytes` at a time
// and its growth is marked for huge pages; on destruction the heap's growth
// step is reset to glibc's default, so the unused rest can be trimmed again.
// Below kMinBytes it does nothing (a small trace's few pages are not worth a
// 2 MiB page each). advise() marks growth made since (call it now and then).
// One is active at a time per process; nested or concurrent ones do nothing.
class HugePageHeap {
 public:
  static constexpr uint64_t kMinBytes = uint64_t{8} << 20;
  explicit HugePageHeap(uint64_t expected_bytes);
  ~HugePageHeap();
  HugePageHeap(const HugePageHeap&) = delete;
  HugePageHeap& operator=(const HugePageHeap&) = delete;

  void advise();

 private:
  bool active_ = false;
  char* advised_end_ = nullptr;  // the heap's end when last marked
};

}  // namespace tracetwin::core
