// One-shot commands (inspect, predict) read a trace, print and exit. Freeing
// the graph's hundreds of thousands of small blocks one by one before the exit
// is work nobody needs: ~Graph and the allocator's frees were 10-15% of
// `inspect`'s CPU time on the 27 MB trace of issue 38 (perf), where the OS
// takes the whole heap back at once. A command hands such an object here and
// uses the reference it gets back.
//
// Deliberate: the object is never destroyed. It stays reachable through a
// static pointer, so LeakSanitizer does not report it. The library itself
// (core::Graph and its readers) stays leak-free; only cli/ calls this, and
// only for objects that live until the process ends anyway.
#pragma once

#include <memory>
#include <utility>
#include <vector>

namespace tracetwin::cli {

template <class T>
T& keepUntilExit(T value) {
  // Never deleted (see above); a pointer rather than a static vector, whose
  // destructor would run at exit and free everything after all.
  static auto* const kept = new std::vector<std::shared_ptr<void>>();
  auto owned = std::make_shared<T>(std::move(value));
  T& ref = *owned;
  kept->push_back(std::move(owned));
  return ref;
}

}  // namespace tracetwin::cli
