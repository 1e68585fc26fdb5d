#include "replay/op_libraries.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "core/errors.h"

namespace tracetwin::replay {

void loadOpLibraries(const std::vector<std::string>& paths) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& path : paths) {
    if (loaded.count(path)) continue;
    if (!std::filesystem::exists(path)) {
      throw InputError(fmt::format("--op-library {}: no such file", path));
    }
    // RTLD_GLOBAL: a library of ops may need the symbols of one loaded before
    // it (fbgemm_gpu's several objects do). The handle is never closed.
    // The file checked above, by its absolute path: dlopen searches the
    // library path for a name without a '/', so "ops.so" in the working
    // directory failed, or loaded a system library of that name.
    const std::string file = std::filesystem::absolute(path).string();
    if (::dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* why = ::dlerror();
      throw InputError(fmt::format("--op-library {}: cannot load it: {}", path,
                                         why ? why : "unknown loader error"));
    }
    loaded.insert(path);
  }
}

}  // namespace tracetwin::replay
