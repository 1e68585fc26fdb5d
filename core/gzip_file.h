// Whole-file reading with transparent gzip decompression (libdeflate).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tracetwin::core {

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
