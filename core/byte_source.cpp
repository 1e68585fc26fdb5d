#include "core/byte_source.h"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "core/gzip_file.h"

namespace tracetwin::core {
namespace {

// The opened file, with the few bytes already read to sniff its format handed
// back first (pipes cannot seek back to them).
class RawFile {
 public:
  explicit RawFile(const std::string& path) : path_(path), file_(openInputFile(path, &size_)) {}

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // 0 for pipes

  // The last 4 bytes of a regular file (gzip's ISIZE), before anything is read.
  bool readTail(unsigned char (&tail)[4]) {
    if (size_ < 4 || std::fseek(file_.get(), -4, SEEK_END) != 0) return false;
    const bool ok = std::fread(tail, 1, 4, file_.get()) == 4;
    return std::fseek(file_.get(), 0, SEEK_SET) == 0 && ok;
  }

  std::string_view peek(size_t n) {
    sniffed_.resize(n);
    sniffed_.resize(readFromFile(sniffed_.data(), n));
    return sniffed_;
  }

  size_t read(char* dst, size_t n) {
    if (sniffed_pos_ < sniffed_.size()) {
      const size_t k = std::min(n, sniffed_.size() - sniffed_pos_);
      std::memcpy(dst, sniffed_.data() + sniffed_pos_, k);
      sniffed_pos_ += k;
      return k + readFromFile(dst + k, n - k);
    }
    return readFromFile(dst, n);
  }

 private:
  size_t readFromFile(char* dst, size_t n) {
    if (n == 0) return 0;
    const size_t got = std::fread(dst, 1, n, file_.get());
    if (got < n && std::ferror(file_.get())) {
      throw InputError(fmt::format("{}: read error: {}", path_, std::strerror(errno)));
    }
    return got;
  }

  std::string path_;
  uint64_t size_ = 0;  // 0 for pipes
  FilePtr file_;
  std::string sniffed_;
  size_t sniffed_pos_ = 0;
};

class PlainSource : public ByteSource {
 public:
  explicit PlainSource(RawFile file) : file_(std::move(file)) {}
  size_t read(char* dst, size_t n) override { return file_.read(dst, n); }
  uint64_t sizeHint() const override { return file_.size(); }

 private:
  RawFile file_;
};

// zlib rather than libdeflate here: libdeflate only decompresses whole
// buffers, which would hold the whole decompressed trace in memory.
class GzipSource : public ByteSource {
 public:
  GzipSource(RawFile file, uint64_t size_hint)
      : file_(std::move(file)), size_hint_(size_hint), in_(size_t{1} << 16) {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~GzipSource() override { inflateEnd(&z_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(char* dst, size_t n) override {
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    while (z_.avail_out > 0 && !done_) {
      if (z_.avail_in < 2 && !topUp()) {
        if (z_.avail_in == 0 && at_member_start_) {
          done_ = true;  // the end of the file, between members
          break;
        }
        if (!at_member_start_ && z_.avail_in == 0) corrupt();  // ends inside a member
      }
      if (at_member_start_) startMember();
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        // Another member may follow (cat a.gz b.gz, pigz): the same stream.
        member_start_ = consumed();
        at_member_start_ = true;
        inflateReset(&z_);
      } else if (r != Z_OK && !(r == Z_BUF_ERROR && z_.avail_in == 0)) {
        corrupt();
      }
    }
    return n - z_.avail_out;
  }

  uint64_t sizeHint() const override { return size_hint_; }

 private:
  uint64_t consumed() const { return file_offset_ - z_.avail_in; }

  // Moves the unread input to the front and reads more; false at the end.
  bool topUp() {
    if (z_.avail_in > 0) std::memmove(in_.data(), z_.next_in, z_.avail_in);
    const size_t got = file_.read(in_.data() + z_.avail_in, in_.size() - z_.avail_in);
    file_offset_ += got;
    z_.next_in = reinterpret_cast<Bytef*>(in_.data());
    z_.avail_in += static_cast<uInt>(got);
    return got > 0;
  }

  // A member must start with the magic bytes; anything else after the last
  // member is refused, not ignored.
  void startMember() {
    const std::string_view head(reinterpret_cast<const char*>(z_.next_in), z_.avail_in);
    if (!isGzip(head)) {
      throw InputError(
          fmt::format("{}: byte {}: expected another gzip member (1f 8b) or the end "
                      "of the file, found other data",
                      file_.path(), consumed()));
    }
    at_member_start_ = false;
  }

  [[noreturn]] void corrupt() const {
    throw InputError(
        fmt::format("{}: corrupt or truncated gzip data in the member starting at byte {}",
                    file_.path(), member_start_));
  }

  RawFile file_;
  uint64_t size_hint_;
  std::vector<char> in_;
  z_stream z_{};
  uint64_t file_offset_ = 0;   // compressed bytes read from the file
  uint64_t member_start_ = 0;  // compressed offset of the current member
  bool at_member_start_ = true;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> openByteSource(const std::string& path) {
  RawFile file(path);
  // ISIZE is right for the usual one-member file under 4 GiB and only a
  // capacity hint here.
  unsigned char tail[4] = {0, 0, 0, 0};
  const bool have_tail = file.readTail(tail);
  if (!isGzip(file.peek(2))) return std::make_unique<PlainSource>(std::move(file));
  const uint64_t hint = have_tail ? std::min(gzipIsize(tail), file.size() * kMaxDeflateRatio) : 0;
  return std::make_unique<GzipSource>(std::move(file), hint);
}

}  // namespace tracetwin::core
