// Streaming reader for big uncompressed traces. Reading the whole file and
// indexing it at once costs the file (1x) plus simdjson's structural index
// (4 bytes per structural character, ~1x on ETs) on top of the Graph. Here the
// file is read in chunks; a small scanner finds where each node of the
// "nodes" array starts and ends, and complete nodes go to simdjson in batches.
// Everything outside the nodes array (schema, pid, ...) is collected and
// parsed as a small document at the end, with "nodes": [].
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/errors.h"
#include "core/trace_parser.h"
#include "core/trace_reader.h"

namespace tracetwin::core {
namespace {

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

class StreamingReader {
 public:
  StreamingReader(const std::string& path, size_t chunk) : path_(path), chunk_(chunk) {}

  Graph read() {
    std::unique_ptr<FILE, FileCloser> file(std::fopen(path_.c_str(), "rb"));
    if (!file) throw InputError(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
    graph_.source_path = path_;
    buf_.resize(chunk_);
    bool first = true;
    for (;;) {
      const size_t got = std::fread(buf_.data() + filled_, 1, buf_.size() - filled_, file.get());
      if (std::ferror(file.get())) {
        throw InputError(fmt::format("{}: read error: {}", path_, std::strerror(errno)));
      }
      if (first) {
        detail::checkStartsLikeJsonObject(std::string_view(buf_.data(), got), path_);
        graph_.reserveNodes(fileSizeHint(file.get()) / 256);
        first = false;
      }
      filled_ += got;
      scan();
      flushNodes();
      if (got == 0) break;
      makeRoom();
    }
    if (state_ != State::kAfterTop || in_string_) {
      throw InputError(
          fmt::format("{}: byte {}: truncated: expected {}", path_, base_ + filled_,
                      state_ == State::kAfterTop ? "the end of a string" : "more of the trace"));
    }
    // The top level without its nodes: schema check, other keys, trailing data.
    std::string header = std::move(header_);
    header.reserve(header.size() + 64);
    detail::TraceParser(std::move(header), path_).parseInto(graph_);
    graph_.finalize();
    return std::move(graph_);
  }

 private:
  enum class State { kTop, kElementOrEnd, kInNode, kCommaOrEnd, kAfterTop };

  static size_t fileSizeHint(FILE* f) {
    const long here = std::ftell(f);
    if (std::fseek(f, 0, SEEK_END) != 0) return 0;
    const long size = std::ftell(f);
    std::fseek(f, here, SEEK_SET);
    return size > 0 ? static_cast<size_t>(size) : 0;
  }

  [[noreturn]] void fail(size_t at, const char* expected) const {
    throw InputError(fmt::format("{}: byte {}: expected {}", path_, base_ + at, expected));
  }

  // Inside a node only brackets and quotes matter (simdjson validates the
  // rest): skip to them without the general state machine. This loop sees
  // every byte of the file, so it is kept tight.
  void scanInsideNode() {
    const char* data = buf_.data();
    while (pos_ < filled_ && state_ == State::kInNode) {
      if (in_string_) {
        skipStringText(data);
        continue;
      }
      while (pos_ < filled_ && !kBracketOrQuote[static_cast<unsigned char>(data[pos_])]) ++pos_;
      if (pos_ == filled_) return;
      if (data[pos_] == '"') {
        in_string_ = true;
      } else {
        scanInNode(data[pos_]);
      }
      ++pos_;
    }
  }

  // Moves pos_ through string text to just after its closing quote, or to
  // filled_ (escape_ then says whether the next chunk's first byte is
  // escaped). memchr finds the quotes; a quote after an odd run of
  // backslashes is escaped. The state at pos_ is known (escape_), so runs are
  // counted from pos_ on.
  void skipStringText(const char* data) {
    while (pos_ < filled_) {
      if (escape_) {
        escape_ = false;
        ++pos_;
        continue;
      }
      const char* from = data + pos_;
      const char* quote = static_cast<const char*>(std::memchr(from, '"', filled_ - pos_));
      const char* stop = quote != nullptr ? quote : data + filled_;
      size_t run = 0;
      while (stop - run > from && *(stop - run - 1) == '\\') ++run;
      if (quote == nullptr) {
        escape_ = run % 2 == 1;
        pos_ = filled_;
        return;
      }
      pos_ = static_cast<size_t>(quote - data) + 1;
      if (run % 2 == 0) {
        in_string_ = false;
        return;
      }
    }
  }

  // The bytes that matter inside a node: quotes and brackets.
  static constexpr std::array<bool, 256> kBracketOrQuote = [] {
    std::array<bool, 256> table{};
    for (unsigned char c : {'"', '{', '}', '[', ']'}) table[c] = true;
    return table;
  }();

  // Advances pos_ over buf_[pos_, filled_), tracking strings and depth.
  void scan() {
    for (; pos_ < filled_; ++pos_) {
      if (state_ == State::kInNode) {
        scanInsideNode();
        if (pos_ == filled_) return;
      }
      const char c = buf_[pos_];
      const bool in_nodes = state_ == State::kElementOrEnd || state_ == State::kInNode ||
                            state_ == State::kCommaOrEnd;
      if (!in_nodes) header_.push_back(c);
      if (in_string_) {
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          in_string_ = false;
          if (!in_nodes && depth_ == 1)
            last_string_ = header_.substr(string_start_ + 1, header_.size() - string_start_ - 2);
        }
        continue;
      }
      if (c == '"') {
        // A string directly in the nodes array is not a node.
        if (state_ == State::kElementOrEnd) fail(pos_, "a node object '{' in \"nodes\"");
        if (state_ == State::kCommaOrEnd) fail(pos_, "',' or ']' after a node");
        in_string_ = true;
        if (!in_nodes) string_start_ = header_.size() - 1;
        continue;
      }
      switch (state_) {
        case State::kTop:
          scanTop(c);
          break;
        case State::kElementOrEnd:
          scanElementOrEnd(c);
          break;
        case State::kInNode:
          scanInNode(c);
          break;
        case State::kCommaOrEnd:
          scanCommaOrEnd(c);
          break;
        case State::kAfterTop:
          break;  // the header parse refuses trailing data
      }
    }
  }

  void scanTop(char c) {
    if (isSpace(c)) return;
    if (c == '[' && depth_ == 1 && last_string_ == "nodes" && last_non_space_ == ':') {
      header_.push_back(']');  // the header keeps "nodes": []
      state_ = State::kElementOrEnd;
      after_comma_ = false;
      return;
    }
    if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (depth_ == 0) fail(pos_, "'{' before any '}' or ']'");
      if (--depth_ == 0) state_ = State::kAfterTop;
    }
    last_non_space_ = c;
  }

  void scanElementOrEnd(char c) {
    if (isSpace(c)) return;
    if (c == '{') {
      node_start_ = pos_;
      if (batch_start_ == kNone) batch_start_ = pos_;
      node_depth_ = 1;
      state_ = State::kInNode;
    } else if (c == ']' && !after_comma_) {
      endNodes();
    } else {
      fail(pos_, "a node object '{' in \"nodes\"");
    }
  }

  void scanInNode(char c) {
    if (c == '{' || c == '[') {
      ++node_depth_;
    } else if ((c == '}' || c == ']') && --node_depth_ == 0) {
      batch_end_ = pos_ + 1;
      state_ = State::kCommaOrEnd;
    }
  }

  void scanCommaOrEnd(char c) {
    if (isSpace(c)) return;
    if (c == ',') {
      state_ = State::kElementOrEnd;
      after_comma_ = true;
    } else if (c == ']') {
      endNodes();
    } else {
      fail(pos_, "',' or ']' after a node");
    }
  }

  void endNodes() {
    state_ = State::kTop;
    last_non_space_ = ']';
    last_string_.clear();
  }

  // Parses the complete nodes seen so far as one JSON array.
  void flushNodes() {
    if (batch_start_ == kNone || batch_end_ == kNone || batch_end_ <= batch_start_) return;
    std::string batch;
    batch.reserve(batch_end_ - batch_start_ + 2 + 64);
    batch.push_back('[');
    batch.append(buf_.data() + batch_start_, batch_end_ - batch_start_);
    batch.push_back(']');
    // "[" stands one byte before the first node, so offsets come out right.
    detail::TraceParser(std::move(batch), path_, base_ + batch_start_ - 1, &schemas_)
        .parseNodeBatch(graph_);
    batch_start_ = state_ == State::kInNode ? node_start_ : kNone;
    batch_end_ = kNone;
  }

  // Drops what was parsed; keeps a partial node at the front; grows the
  // buffer when one node is bigger than it.
  void makeRoom() {
    // Every complete node was flushed: only a node still being read is kept.
    const size_t keep = state_ == State::kInNode ? node_start_ : filled_;
    if (keep > 0) {
      std::memmove(buf_.data(), buf_.data() + keep, filled_ - keep);
      base_ += keep;
      filled_ -= keep;
      pos_ -= keep;
      if (batch_start_ != kNone) batch_start_ -= keep;
      node_start_ -= std::min(node_start_, keep);
    }
    if (filled_ == buf_.size()) buf_.resize(buf_.size() * 2);
  }

  static constexpr size_t kNone = static_cast<size_t>(-1);

  const std::string& path_;
  size_t chunk_;
  Graph graph_;
  detail::SchemaCache schemas_;  // one parse per distinct schema across batches
  std::string buf_;
  size_t filled_ = 0;  // bytes of buf_ holding file data
  size_t pos_ = 0;     // next byte to scan
  size_t base_ = 0;    // file offset of buf_[0]
  State state_ = State::kTop;
  int depth_ = 0;       // outside the nodes array
  int node_depth_ = 0;  // inside the current node
  bool in_string_ = false, escape_ = false, after_comma_ = false;
  char last_non_space_ = 0;
  size_t string_start_ = 0;
  std::string last_string_;
  std::string header_;
  size_t batch_start_ = kNone, batch_end_ = kNone, node_start_ = 0;
};

}  // namespace

Graph readTraceStreaming(const std::string& path, size_t chunk_bytes) {
  return StreamingReader(path, std::max<size_t>(chunk_bytes, 256)).read();
}

}  // namespace tracetwin::core
