// The host allocator settings that measuring commands (replay, compare,
// calibrate) run under. glibc's default mmap and trim thresholds move with the
// process's history: the same CPU step then pays for page faults in one
// process and not in the next (an eager cnn step took 7.0 to 11.1 ms across
// processes, 859 minor faults per step in the slow ones). A benchmark wants
// the workload's cost, not the allocator's history, so by default both
// thresholds are pinned, in the replay as in scripts/capture.py's original
// run; `--malloc default` measures with glibc's defaults.
//
// Calibration wants less: what an op costs in memory already mapped. The
// predictor charges an output at or above the pinned mmap threshold its
// fresh pages on top of the kernel model (predictors/host/fresh_pages.h), so
// a model trained on such an output's faults counts them twice. Under the
// pinned thresholds the dense embedding_bag backward's 36-61 MiB gradients
// were mapped fresh in some of a point's repeats and served from the heap in
// others (Zen 5 VM: 106-220 ms against 2.4-5.0 ms, 11.4 us a page), and the
// medians taught the trees the slow mode. `heap` also
// turns mmap and trimming off and faults 512 MiB of heap in up front, so
// allocations come from memory already mapped until the heap has fragmented
// past the reserve (docs/calibration.md: what a full calibration still saw).
// `caching` (calibrate's default) is heap, and tensors come from freed
// blocks of their size (replay/caching_cpu_allocator.h), so fragmentation
// cannot bring the faults back.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tracetwin::cli {

enum class HostMalloc { kPinned, kDefault, kHeap, kCaching };

// `--malloc`; its default is `mode`'s value when called.
void addHostMallocOption(CLI::App& sub, HostMalloc& mode);

// Applies `mode` to this process and returns its name for reports
// ("pinned", "default", "heap", "caching"). Pinned: allocations under 32 MiB
// come from the heap and freed memory is not returned to the OS, so a steady
// state has no page faults but those of tensors at or above 32 MiB, mapped
// fresh by every call (by replay/fresh_mapping_cpu_allocator.h, whatever
// free chunks the heap holds). Heap: no allocation is mapped on its own and the heap
// is never trimmed, so a replay's steady state has none. Caching: heap, and
// a tensor's memory is a freed block of its size where there is one. Glibc's
// settings are a no-op where the C library is not glibc ("default", or
// "caching" with glibc's settings left alone).
std::string applyHostMalloc(HostMalloc mode);

// What the caching allocator did so far, one line ("" under the other
// modes): how many tensors came from freed memory and how much it kept.
std::string hostMallocUse(HostMalloc mode);

}  // namespace tracetwin::cli
