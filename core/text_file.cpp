#include "core/text_file.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/errors.h"
#include "core/input_files.h"

namespace tracetwin::core {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::optional<std::string> read(const std::string& path, std::string_view what, bool optional,
                                InputUse use) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (optional && errno == ENOENT) return std::nullopt;
    throw InputError(fmt::format("{}: cannot open {}: {}", path, what, std::strerror(errno)));
  }
  // A directory, or a device (/dev/zero as a device spec was read without end).
  if (const std::string problem = inputFileKindProblem(st.st_mode); !problem.empty())
    throw InputError(fmt::format("{}: {}, not {}", path, problem, what));
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw InputError(fmt::format("{}: cannot open {}: {}", path, what, std::strerror(errno)));
  }
  std::string text;
  char piece[1 << 14];
  for (size_t n; (n = std::fread(piece, 1, sizeof piece, file.get())) > 0;) text.append(piece, n);
  if (std::ferror(file.get())) {
    throw InputError(fmt::format("{}: read error: {}", path, std::strerror(errno)));
  }
  // Parsed as text, a compressed or binary file reads as a syntax error far
  // from the cause ("YAML syntax error: unknown escape character").
  if (text.size() >= 2 && uint8_t(text[0]) == 0x1f && uint8_t(text[1]) == 0x8b) {
    throw InputError(fmt::format(
        "{}: is gzip-compressed, not {} (give the uncompressed text: gunzip it)", path, what));
  }
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    throw InputError(
        fmt::format("{}: byte {}: a NUL byte: a binary file, not {}", path, nul, what));
  }
  noteInputFile(path, use);
  return text;
}

}  // namespace

std::string readTextFile(const std::string& path, std::string_view what, InputUse use) {
  return *read(path, what, false, use);
}

std::optional<std::string> readTextFileIfPresent(const std::string& path, std::string_view what,
                                                 InputUse use) {
  return read(path, what, true, use);
}

namespace {

// Writes all of `text` to `file`; false with errno set when it could not.
bool writeAll(std::FILE* file, std::string_view text) {
  return std::fwrite(text.data(), 1, text.size(), file) == text.size() && std::fflush(file) == 0;
}

[[noreturn]] void cannotWrite(const std::string& path, int error) {
  throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(error)));
}

}  // namespace

namespace {

void writeReplacing(const std::string& path, std::string_view text) {
  // A regular file (or a new one) is written beside itself and renamed over
  // it: a full disk leaves the old file whole (models a fit was replacing)
  // and no half-written report. A device, FIFO or pipe is written in place.
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
    if (!file) cannotWrite(path, errno);
    if (!writeAll(file.get(), text)) cannotWrite(path, errno);
    return;
  }
  // Through a symlink, the file it names is replaced, not the link.
  std::error_code ec;
  const std::filesystem::path target =
      exists ? std::filesystem::canonical(path, ec) : std::filesystem::path(path);
  const std::string final_path = ec ? path : target.string();
  std::string temp = final_path + ".tracetwin-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) cannotWrite(path, errno);
  std::unique_ptr<std::FILE, FileCloser> file(::fdopen(fd, "wb"));
  if (!file) {
    const int error = errno;
    ::close(fd);
    std::remove(temp.c_str());
    cannotWrite(path, error);
  }
  if (!writeAll(file.get(), text)) {
    const int error = errno;
    file.reset();
    std::remove(temp.c_str());
    cannotWrite(path, error);
  }
  file.reset();
  // mkstemp makes 0600; a report is as readable as any file the user makes.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(temp.c_str(), exists ? (st.st_mode & 07777) : (0666 & ~mask));
  if (std::rename(temp.c_str(), final_path.c_str()) != 0) {
    const int error = errno;
    std::remove(temp.c_str());
    cannotWrite(path, error);
  }
}

}  // namespace

void writeTextFile(const std::string& path, std::string_view text) {
  refuseOverwritingAnInput(path, "this output");
  writeReplacing(path, text);
}

void updateModelFile(const std::string& path, std::string_view text) {
  refuseOverwritingAnInput(path, "this model file", true);
  writeReplacing(path, text);
}

}  // namespace tracetwin::core
