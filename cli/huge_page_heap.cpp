#include "cli/huge_page_heap.h"

#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <set>

#if defined(__linux__) && defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#include <unistd.h>
#define TRACETWIN_CAN_REEXEC 1
#endif

namespace tracetwin::cli {
namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb=1";
// The heap then grows 16 MiB at a time, so each growth is whole huge pages:
// on the 27 MB inspect 8,800 page faults -> 4,450 without it, ~1,000 with.
constexpr const char* kTopPad = "glibc.malloc.top_pad=16777216";
// Set in the re-executed process only: the GLIBC_TUNABLES it started with
// ("=" + value), or "-" when there was none.
constexpr const char* kMarker = "TRACETWIN_HEAP_REEXEC";

// The commands that read traces into a Graph and time nothing of their own.
bool readsTracesOnly(const std::string& command) {
  static const std::set<std::string> commands = {"inspect", "predict", "link",
                                                 "fit",     "export",  "sweep"};
  return commands.count(command) != 0;
}

// A word's candidate paths: itself, what follows its first '=', and the
// ','-separated parts of either (`--ranks a.json,b.json`).
std::vector<std::string> candidatePaths(const std::string& word) {
  std::vector<std::string> out = {word};
  const size_t equals = word.find('=');
  const std::string value = equals == std::string::npos ? word : word.substr(equals + 1);
  if (equals != std::string::npos) out.push_back(value);
  if (value.find(',') != std::string::npos) {
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = value.find(',', start);
      const size_t end = comma == std::string::npos ? value.size() : comma;
      if (end > start) out.push_back(value.substr(start, end - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

#ifdef TRACETWIN_CAN_REEXEC
std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string firstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}
#endif

}  // namespace

bool wantsHugePageHeap(const std::vector<std::string>& args, const HeapSurroundings& around) {
  if (args.empty() || !readsTracesOnly(args.front())) return false;
  if (around.opt_out == "0" || around.opt_out == "off") return false;
  if (around.thp_enabled.find("[madvise]") == std::string::npos) return false;
  if (around.glibc_tunables.find("glibc.malloc.hugetlb") != std::string::npos) return false;
  if (around.ld_preload.find("vgpreload") != std::string::npos) return false;
  uint64_t total = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    for (const std::string& path : candidatePaths(args[i])) {
      if (!path.empty() && path.front() != '-') total += around.trace_bytes(path);
    }
    if (total >= kHugePageHeapMinTraceBytes) return true;
  }
  return false;
}

uint64_t traceBytesOnDisk(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  const auto size = static_cast<uint64_t>(st.st_size);
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 2> magic{};
  if (size < 18 || !in.read(reinterpret_cast<char*>(magic.data()), 2) || magic[0] != 0x1f ||
      magic[1] != 0x8b) {
    return size;
  }
  // RFC 1952: the last four bytes are the input size mod 2^32, little-endian.
  std::array<unsigned char, 4> trailer{};
  if (!in.seekg(-4, std::ios::end) || !in.read(reinterpret_cast<char*>(trailer.data()), 4)) {
    return size;
  }
  const uint64_t isize = uint64_t{trailer[0]} | uint64_t{trailer[1]} << 8 |
                         uint64_t{trailer[2]} << 16 | uint64_t{trailer[3]} << 24;
  return isize > size ? isize : size;
}

bool restoreEnvironmentAfterReexec() {
  const char* marker = std::getenv(kMarker);
  if (marker == nullptr) return false;
  const std::string before(marker);
  if (before.rfind('=', 0) == 0) {
    ::setenv("GLIBC_TUNABLES", before.c_str() + 1, 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
  ::unsetenv(kMarker);
  return true;
}

void startWithHugePageHeap(int argc, char** argv) {
#ifdef TRACETWIN_CAN_REEXEC
  if (restoreEnvironmentAfterReexec()) return;
  // Most commands stop here, before any file is read.
  if (argc < 2 || !readsTracesOnly(argv[1])) return;
  HeapSurroundings around;
  around.thp_enabled = firstLine("/sys/kernel/mm/transparent_hugepage/enabled");
  around.glibc_tunables = environment("GLIBC_TUNABLES");
  around.opt_out = environment("TRACETWIN_HUGE_PAGES");
  around.ld_preload = environment("LD_PRELOAD");
  around.trace_bytes = traceBytesOnDisk;
  if (!wantsHugePageHeap(std::vector<std::string>(argv + 1, argv + argc), around)) return;

  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string marker = tunables == nullptr ? "-" : "=" + std::string(tunables);
  std::string with = tunables == nullptr ? std::string() : std::string(tunables);
  if (!with.empty()) with += ":";
  with += kTunable;
  if (with.find("glibc.malloc.top_pad") == std::string::npos) with += std::string(":") + kTopPad;
  if (::setenv(kMarker, marker.c_str(), 1) != 0) return;
  if (::setenv("GLIBC_TUNABLES", with.c_str(), 1) == 0) {
    ::execv("/proc/self/exe", argv);  // returns only when it failed
  }
  // Run on as we are: the environment as it was.
  if (tunables == nullptr) {
    ::unsetenv("GLIBC_TUNABLES");
  } else {
    ::setenv("GLIBC_TUNABLES", marker.c_str() + 1, 1);
  }
  ::unsetenv(kMarker);
#else
  (void)argc;
  (void)argv;
#endif
}

}  // namespace tracetwin::cli
