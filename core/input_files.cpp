#include "core/input_files.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "core/errors.h"

namespace tracetwin::core {
namespace {

// Device and inode, plus the modification time and size: an inode number is
// reused once its file is deleted, and a new file written under a reused
// number (a process that reads and deletes temporary files) is not the
// input it once was.
using FileId = std::tuple<dev_t, ino_t, int64_t, int64_t, off_t>;

struct InputFiles {
  std::mutex mutex;
  std::map<FileId, InputUse> read;
};

InputFiles& inputFiles() {
  static InputFiles files;  // readers may run on several threads
  return files;
}

bool fileIdOf(const std::string& path, FileId* id) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  *id = {st.st_dev, st.st_ino, int64_t(st.st_mtim.tv_sec), int64_t(st.st_mtim.tv_nsec), st.st_size};
  return true;
}

}  // namespace

std::string inputFileKindProblem(unsigned mode) {
  if (S_ISREG(mode) || S_ISFIFO(mode)) return {};
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is a special file";
}

std::string inputFileProblem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? "file does not exist"
                           : fmt::format("cannot stat: {}", std::strerror(errno));
  }
  return inputFileKindProblem(st.st_mode);
}

void noteInputFile(const std::string& path, InputUse use) {
  FileId id;
  if (!fileIdOf(path, &id)) return;  // pipes and FIFOs cannot be overwritten by a report
  InputFiles& files = inputFiles();
  const std::lock_guard<std::mutex> lock(files.mutex);
  const auto [it, added] = files.read.emplace(id, use);
  if (!added && use == InputUse::kReadOnly) it->second = use;
}

void refuseOverwritingAnInput(const std::string& path, std::string_view what,
                              bool updating_models) {
  FileId id;
  if (!fileIdOf(path, &id)) return;
  InputFiles& files = inputFiles();
  const std::lock_guard<std::mutex> lock(files.mutex);
  const auto it = files.read.find(id);
  if (it != files.read.end() && !(updating_models && it->second == InputUse::kModel)) {
    throw InputError(
        fmt::format("{}: is one of this command's inputs ({} would replace it); name another file",
                    path, what));
  }
}

}  // namespace tracetwin::core
