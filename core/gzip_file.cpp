#include "core/gzip_file.h"

#include <fmt/core.h>
#include <libdeflate.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/errors.h"
#include "core/input_files.h"

namespace tracetwin::core {
namespace {

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

size_t initialCapacity(std::string_view data) {
  const size_t bound = data.size() * kMaxDeflateRatio;
  if (data.size() >= 18) {
    const auto& tail = *reinterpret_cast<const unsigned char(*)[4]>(data.data() + data.size() - 4);
    const size_t isize = gzipIsize(tail);
    if (isize > 0 && isize <= bound) return isize;
  }
  return std::min(bound, data.size() * 4 + 4096);
}

}  // namespace

bool isGzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

FilePtr openInputFile(const std::string& path, uint64_t* regular_size) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(::fileno(file.get()), &st) != 0) {
    throw InputError(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  }
  // A device read as a trace never ends (/dev/zero) or waits on a terminal.
  if (const std::string problem = inputFileKindProblem(st.st_mode); !problem.empty())
    throw InputError(fmt::format("{}: {}, not a file", path, problem));
  *regular_size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  noteInputFile(path);
  return file;
}

uint64_t gzipIsize(const unsigned char (&tail)[4]) {
  return uint64_t{tail[0]} | uint64_t{tail[1]} << 8 | uint64_t{tail[2]} << 16 |
         uint64_t{tail[3]} << 24;
}

std::string readFileBytes(const std::string& path, size_t padding) {
  uint64_t size = 0;
  FilePtr file = openInputFile(path, &size);
  std::string bytes;
  // Regular files are read in one allocation; pipes and /proc files grow.
  if (size > 0) bytes.reserve(static_cast<size_t>(size) + padding);
  constexpr size_t kChunk = size_t{1} << 20;
  size_t used = 0;
  for (;;) {
    if (bytes.size() < used + kChunk) {
      if (bytes.capacity() < used + kChunk + padding) bytes.reserve((used + kChunk) * 2 + padding);
      bytes.resize(used + kChunk);
    }
    const size_t got = std::fread(bytes.data() + used, 1, kChunk, file.get());
    used += got;
    if (got < kChunk) break;
  }
  if (std::ferror(file.get())) {
    throw InputError(fmt::format("{}: read error: {}", path, std::strerror(errno)));
  }
  bytes.resize(used);
  if (bytes.capacity() < used + padding) bytes.reserve(used + padding);
  return bytes;
}

std::string gunzip(std::string_view data, const std::string& path, size_t padding) {
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> dec(
      libdeflate_alloc_decompressor());
  if (!dec) throw std::bad_alloc();
  const size_t bound = data.size() * kMaxDeflateRatio + 4096;
  std::string out;
  out.resize(initialCapacity(data) + padding);
  size_t produced = 0;
  size_t pos = 0;
  // A .gz file may hold several members (concatenated gzip streams, as
  // `cat a.gz b.gz` or pigz make); each decompresses after the previous.
  while (pos < data.size()) {
    if (!isGzip(data.substr(pos))) {
      throw InputError(
          fmt::format("{}: byte {}: expected another gzip member (1f 8b) or the end "
                      "of the file, found other data",
                      path, pos));
    }
    for (;;) {
      size_t in_used = 0;
      size_t out_used = 0;
      const size_t avail = out.size() - padding - produced;
      const libdeflate_result r =
          libdeflate_gzip_decompress_ex(dec.get(), data.data() + pos, data.size() - pos,
                                        out.data() + produced, avail, &in_used, &out_used);
      if (r == LIBDEFLATE_SUCCESS) {
        produced += out_used;
        pos += in_used;
        break;
      }
      if (r != LIBDEFLATE_INSUFFICIENT_SPACE || out.size() - padding >= bound) {
        throw InputError(
            fmt::format("{}: corrupt or truncated gzip data in the member starting "
                        "at byte {}",
                        path, pos));
      }
      out.resize(std::min(bound, (out.size() - padding) * 2) + padding);
    }
  }
  out.resize(produced);
  return out;
}

}  // namespace tracetwin::core
