// Removes a directory tree the tests made, without std::filesystem::remove_all.
//
// A pip LibTorch (>= 2.5) exports copies of libstdc++'s std::filesystem
// symbols it linked statically (pytorch/pytorch#133437). In a test binary
// that links such a LibTorch, remove_all binds to that copy and jumps to
// address 0 (seen on the GPU host with PyTorch 2.11). POSIX nftw does the
// same walk with no C++ runtime involved.
#pragma once

#include <ftw.h>

#include <cstdio>
#include <string>

namespace tracetwin::testing {

inline int removeOneEntry(const char* path, const struct stat*, int, struct FTW*) {
  return std::remove(path);
}

// Like remove_all(path, error_code&): a missing path is not an error.
// Returns false when something could not be removed.
inline bool removeTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return true;
  // Depth first (FTW_DEPTH) so directories are empty when their turn comes;
  // FTW_PHYS: a symbolic link is removed, never followed.
  return nftw(path.c_str(), removeOneEntry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

}  // namespace tracetwin::testing
