// A private temporary directory for a command's intermediate files (the
// plans' traces of `sweep --measure`, the ranks' reports of `compare
// --nproc`): made with mkdtemp (a fresh name, never a path another user could
// have planted a symlink at) and removed when the command ends. When it ends
// by an exception the files are kept for the user to read, and the path said.
#pragma once

#include <string>
#include <string_view>

namespace tracetwin::cli {

class TempDirectory {
 public:
  // Under $TMPDIR (or /tmp); throws InputError naming the directory and why
  // when it cannot be made there.
  explicit TempDirectory(std::string_view prefix);
  ~TempDirectory();
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tracetwin::cli
