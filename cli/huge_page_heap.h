// Transparent huge pages for the heap of a command that builds a big trace's
// Graph and measures nothing (inspect, predict, link, fit, export, sweep).
//
// Reading a 27 MB trace touches ~35 MB of fresh heap: ~8.8k page faults at
// 4 KiB, a fifth of `inspect`'s CPU on a virtualised host where each fault
// traps to the hypervisor. glibc backs its heap with 2 MiB pages when asked
// by its `glibc.malloc.hugetlb=1` tunable (and grows it 16 MiB at a time,
// `top_pad`), which it reads only at start-up:
// such a command re-executes itself once with the tunable set (and the
// kernel's THP mode `madvise`), and the new process puts GLIBC_TUNABLES back
// as it was, so the children it starts (sweep --measure's replays) inherit
// the user's environment. Measuring commands never do it: their allocator
// settings are cli/host_malloc.h's. TRACETWIN_HUGE_PAGES=0 turns it off.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tracetwin::cli {

// Below this many bytes of trace (uncompressed) the second start costs more
// than the faults it saves: inspect of a 0.9 MB trace 22.1 -> 24.1 ms with
// it, of 1.8 MB 30.7 -> 26.4 ms (31 and 21 interleaved rounds, 2026-11-28).
inline constexpr uint64_t kHugePageHeapMinTraceBytes = uint64_t{2} << 20;

// What the decision reads from the process's surroundings (tests fake it).
struct HeapSurroundings {
  std::string thp_enabled;  // /sys/kernel/mm/transparent_hugepage/enabled
  std::string glibc_tunables;
  std::string opt_out;     // TRACETWIN_HUGE_PAGES
  std::string ld_preload;  // valgrind preloads its vgpreload_*.so: no re-exec under it
  // The bytes of trace a command-line word names: 0 for a word that is not a
  // regular file; a gzip file's uncompressed size.
  std::function<uint64_t(const std::string&)> trace_bytes;
};

// Whether `args` (argv without argv[0]) is a command worth a huge-page heap:
// a non-measuring subcommand whose file arguments (words, their parts after
// '=' and between ',') hold at least kHugePageHeapMinTraceBytes, on a kernel
// whose THP mode is `madvise`, with the tunable not already set or opted out.
bool wantsHugePageHeap(const std::vector<std::string>& args, const HeapSurroundings& around);

// How many bytes of trace `path` holds: its size, or for gzip its trailer's
// uncompressed size (mod 2^32, so at least the compressed size); 0 when it is
// not a readable regular file.
uint64_t traceBytesOnDisk(const std::string& path);

// In a process startWithHugePageHeap started: puts GLIBC_TUNABLES back as
// it was before, clears the marker and returns true; false (nothing changed)
// in any other process.
bool restoreEnvironmentAfterReexec();

// Called first in main. In a process this started, puts GLIBC_TUNABLES back
// and returns; otherwise re-executes the binary with the tunable when
// wantsHugePageHeap says so (returning, unchanged, if the exec fails).
void startWithHugePageHeap(int argc, char** argv);

}  // namespace tracetwin::cli
