// Whole-file reading with transparent gzip decompression (libdeflate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace tracetwin::core {

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<FILE, FileCloser>;

// Opens `path` for reading. Throws InputError naming the file when it cannot
// be opened or stat'ed, or is a directory. `regular_size`: the size of a
// regular file, 0 for pipes and the like.
FilePtr openInputFile(const std::string& path, uint64_t* regular_size);

// Deflate cannot expand data by more than 1032:1 (a 258-byte match per two
// bits); anything that claims more is corrupt, not just very compressible.
inline constexpr uint64_t kMaxDeflateRatio = 1032;

// ISIZE, from a gzip file's last 4 bytes: the last member's length mod 2^32.
// Only a first guess: wrong for multi-member files and for data over 4 GiB,
// and a forged one could claim any size (bound it by kMaxDeflateRatio).
uint64_t gzipIsize(const unsigned char (&tail)[4]);

// True when `data` starts with the gzip magic bytes 1f 8b.
bool isGzip(std::string_view data);

// Reads the file's bytes. The returned string has at least `padding` bytes of
// spare capacity after its end (simdjson reads up to 64 bytes past the end).
// Throws InputError naming the file on I/O errors.
std::string readFileBytes(const std::string& path, size_t padding);

// Decompresses every member of a gzip stream. `path` names it in errors.
// Throws InputError (file and byte offset of the bad member) on corrupt or
// truncated data. Spare capacity as for readFileBytes.
std::string gunzip(std::string_view data, const std::string& path, size_t padding);

}  // namespace tracetwin::core
