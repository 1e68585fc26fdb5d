// A file read front to back in pieces, gzip or not. The trace reader parses
// while it reads, so neither the file nor its decompressed text is ever held
// whole (peak memory ~ the Graph plus one chunk).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tracetwin::core {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `n` bytes into `dst`; 0 only at the end of the data.
  // Throws InputError naming the file on I/O errors and corrupt gzip data.
  virtual size_t read(char* dst, size_t n) = 0;
  // Expected total bytes read (0 when unknown): a capacity hint only.
  virtual uint64_t sizeHint() const = 0;
};

// Opens `path` and decompresses it when it starts with the gzip magic bytes
// (every member of a multi-member file). Throws InputError when the path
// cannot be opened or is a directory.
std::unique_ptr<ByteSource> openByteSource(const std::string& path);

}  // namespace tracetwin::core
