#include "core/text_file.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/errors.h"
#include "core/input_files.h"

namespace tracetwin::core {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::optional<std::string> read(const std::string& path, std::string_view what, bool optional) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (optional && errno == ENOENT) return std::nullopt;
    throw InputError(fmt::format("{}: cannot open {}: {}", path, what, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) throw InputError(fmt::format("{}: is a directory, not {}", path, what));
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw InputError(fmt::format("{}: cannot open {}: {}", path, what, std::strerror(errno)));
  }
  noteInputFile(path);
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
  return text;
}

}  // namespace

std::string readTextFile(const std::string& path, std::string_view what) {
  return *read(path, what, false);
}

std::optional<std::string> readTextFileIfPresent(const std::string& path, std::string_view what) {
  return read(path, what, true);
}

void writeTextFile(const std::string& path, std::string_view text) {
  refuseOverwritingAnInput(path, "this output");
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  if (!file) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  if (std::fwrite(text.data(), 1, text.size(), file.get()) != text.size() ||
      std::fflush(file.get()) != 0) {
    const int error = errno;
    // A truncated report must not stay behind looking like one (a full disk
    // left half a JSON). Only a regular file: never /dev/full or a FIFO.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) std::remove(path.c_str());
    throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(error)));
  }
}

}  // namespace tracetwin::core
