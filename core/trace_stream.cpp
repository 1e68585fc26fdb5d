// The trace reader: files (plain or gzip) are read a chunk at a time and
// parsed node by node as they arrive, so that neither the text nor simdjson's
// index of it (4 bytes per structural character, ~1x the file on ETs) is held
// whole: peak memory is the Graph plus about three chunks.
//
// Cutting the nodes array into batches of whole nodes takes knowing where
// nodes end. Two ways:
//  - fast: a raw newline byte is never inside a JSON string, and PyTorch
//    writes each node starting on its own line with the same indentation as
//    the first. The cut goes before the last such line in the chunk, and the
//    batch is parsed in place as "[" + nodes + "]" with one byte borrowed at
//    each end. The guess is checked by the parse itself: a batch that does not
//    end on a whole node cannot parse as an array of nodes. On any error the
//    batch's nodes are dropped and the exact way takes over.
//  - exact: a small scanner follows strings and brackets byte by byte (the
//    only way for minified files, and the one that reports errors).
// Everything outside the nodes array (schema, pid, ...) is collected and
// parsed as a small document at the end, with "nodes": [].
// Big files' batches are parsed on several threads (core/node_batches.h):
// the reading thread cuts them and queues them with the buffer they are in.
// A batch that fails there (bad input, or a cut the fast way guessed wrong)
// sends the whole file to one thread again, whose Graph or error it gets.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "core/byte_source.h"
#include "core/errors.h"
#include "core/node_batches.h"
#include "core/node_cuts.h"
#include "core/trace_parser.h"
#include "core/trace_reader.h"

namespace tracetwin::core {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

class StreamingReader {
 public:
  StreamingReader(const std::string& path, size_t chunk, unsigned threads)
      : path_(path), chunk_(chunk), threads_(threads) {}

  // Whether batches are out on other threads: an error then sends the file
  // to one thread again (once they are all back, errors are one thread's).
  bool parallel() const { return pipeline_.has_value(); }

  Graph read() {
    std::unique_ptr<ByteSource> source = openByteSource(path_);
    graph_.source_path = path_;
    buf_.resize(chunk_ + kSlack);
    bool first = true;
    for (;;) {
      const size_t got = source->read(buf_.data() + filled_, capacity() - filled_);
      if (first) {
        detail::checkStartsLikeJsonObject(std::string_view(buf_.data(), got), path_);
        // Nodes are >= ~250 bytes of JSON each; untouched capacity costs no RSS.
        graph_.reserveNodes(static_cast<size_t>(source->sizeHint() / 256));
        const unsigned threads = detail::readerThreads(source->sizeHint(), threads_);
        if (threads > 1) pipeline_.emplace(path_, threads, schemas_);
        first = false;
      }
      filled_ += got;
      eof_ = got == 0;
      process();
      if (eof_) break;
      makeRoom();
    }
    if (state_ != State::kAfterTop || in_string_) {
      throw InputError(
          fmt::format("{}: byte {}: truncated: expected {}", path_, base_ + filled_,
                      state_ == State::kAfterTop ? "the end of a string" : "more of the trace"));
    }
    if (pipeline_) {
      pipeline_->finish(graph_);
      pipeline_.reset();  // the workers' parsers and scratch go with them
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
  enum class Fast { kProgress, kNeedMore, kDeclined };

  // Room after the data for the borrowed ']' and simdjson's padding.
  static constexpr size_t kSlack = simdjson::SIMDJSON_PADDING + 1;
  size_t capacity() const { return buf_.size() - kSlack; }
  std::string_view filledText() const { return std::string_view(buf_.data(), filled_); }

  // Reads what the buffer holds: the fast way while it can, else the exact.
  void process() {
    for (;;) {
      if (fast_ && state_ == State::kElementOrEnd) {
        const Fast r = fastBatch();
        if (r == Fast::kProgress) continue;
        if (r == Fast::kNeedMore) return;
        fast_ = false;  // the exact scanner reads the rest of the file
      }
      const bool entered_nodes = scan();
      flushNodes();
      if (!entered_nodes) return;
    }
  }

  // One batch of whole nodes from pos_ (just after '[' or a node's ','),
  // parsed in place. kNeedMore: no cut point yet, read on. kDeclined: not
  // the layout this expects, or bad input; nothing was consumed.
  Fast fastBatch() {
    size_t start = pos_;
    while (start < filled_ && isSpace(buf_[start])) ++start;
    if (start == filled_) return eof_ ? Fast::kDeclined : Fast::kNeedMore;
    // ']' ends the nodes (or is an error after a comma): the exact scanner's.
    if (buf_[start] != '{' || start == 0) return Fast::kDeclined;
    if (indent_.empty() && !learnIndent(start)) return Fast::kDeclined;
    size_t end = filled_;
    size_t next = filled_;
    if (eof_) {
      // The last batch ends with the last node: the tail after the nodes
      // would leave "[" + text + "]" unbalanced, which simdjson refuses.
      if (!detail::findLastNodeEnd(filledText(), start, end)) return Fast::kDeclined;
    } else if (!detail::findNodeCut(filledText(), start, indent_, end, next)) {
      // One node longer than the chunk grows the buffer (makeRoom); a file
      // without newlines between nodes would grow it to the whole file.
      const size_t pending = filled_ - start;
      const bool minified =
          pending >= chunk_ && std::memchr(buf_.data() + start, '\n', pending) == nullptr;
      if (minified || pending > 4 * chunk_) return Fast::kDeclined;
      return Fast::kNeedMore;
    }
    if (pipeline_) return handOff(start, end, eof_ ? end : next);
    const size_t nodes_before = graph_.nodeCount();
    char* text = buf_.data() + start - 1;
    const char saved_open = text[0], saved_close = buf_[end];
    text[0] = '[';
    buf_[end] = ']';
    size_t after = 0;
    bool parsed = true;
    try {
      const simdjson::padded_string_view view(text, end - start + 2, buf_.size() - (start - 1));
      after = detail::TraceParser(view, path_, base_ + start - 1, &schemas_).parseNodeArray(graph_);
    } catch (const InputError&) {
      parsed = false;
    }
    text[0] = saved_open;
    buf_[end] = saved_close;
    if (!parsed) {
      graph_.truncateNodes(nodes_before);
      return Fast::kDeclined;
    }
    if (after == std::string_view::npos) {
      if (eof_) {
        // The exact scanner reads the ']' and the top-level keys after it.
        pos_ = end;
        state_ = State::kCommaOrEnd;
        return Fast::kDeclined;
      }
      // Every node up to the cut was read; the next starts on the next line.
      pos_ = next;
      after_comma_ = true;
      return Fast::kProgress;
    }
    // The real ']' of the nodes came first: what follows it is the header's.
    pos_ = start - 1 + after;
    endNodes();
    return Fast::kProgress;
  }

  // The batch [start, end) goes to the other threads with the buffer it is
  // in, as "[" + nodes + "]" (the bytes around it are not needed again);
  // what follows from `keep` (the next node's start, or at the end of the
  // file the ']' and the keys after it) moves to a spare buffer.
  Fast handOff(size_t start, size_t end, size_t keep) {
    std::string next = pipeline_->spareBuffer();
    if (next.size() < buf_.size()) next.resize(buf_.size());
    std::memcpy(next.data(), buf_.data() + keep, filled_ - keep);
    buf_[start - 1] = '[';
    buf_[end] = ']';
    detail::NodeBatchText batch{std::move(buf_), start - 1, end - start + 2, base_ + start - 1};
    buf_ = std::move(next);
    base_ += keep;
    filled_ -= keep;
    pos_ = 0;
    pipeline_->submit(std::move(batch), graph_);
    if (eof_) {
      state_ = State::kCommaOrEnd;  // the exact scanner reads the rest
      return Fast::kDeclined;
    }
    after_comma_ = true;
    return Fast::kProgress;
  }

  // The indentation of the first node's line: the cut candidates are lines
  // that start with exactly it and '{'.
  bool learnIndent(size_t start) {
    size_t line = start;
    while (line > 0 && (buf_[line - 1] == ' ' || buf_[line - 1] == '\t')) --line;
    if (line == 0 || buf_[line - 1] != '\n') return false;     // '{' not first on its line
    indent_.assign(buf_.data() + line - 1, start - line + 1);  // "\n" + indent
    indent_ += '{';
    return true;
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
  // Returns true when it stopped just after the '[' of the nodes for the fast
  // way to take over.
  bool scan() {
    for (; pos_ < filled_; ++pos_) {
      if (state_ == State::kInNode) {
        scanInsideNode();
        if (pos_ == filled_) return false;
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
          if (fast_ && state_ == State::kElementOrEnd) {
            ++pos_;
            return true;
          }
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
    return false;
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
    // The scanner cut the batch at a node's end: the array is all of it.
    if (pipeline_) {
      const size_t length = batch.size();
      pipeline_->submit({std::move(batch), 0, length, base_ + batch_start_ - 1}, graph_);
    } else {
      detail::TraceParser(std::move(batch), path_, base_ + batch_start_ - 1, &schemas_)
          .parseNodeArray(graph_);
    }
    batch_start_ = state_ == State::kInNode ? node_start_ : kNone;
    batch_end_ = kNone;
  }

  // Drops what was parsed; keeps a partial node at the front; grows the
  // buffer when one node is bigger than it.
  void makeRoom() {
    // Every complete node was flushed: only a node still being read (or, the
    // fast way, what is after the last cut) is kept.
    const size_t keep = state_ == State::kInNode ? node_start_ : pos_;
    if (keep > 0) {
      std::memmove(buf_.data(), buf_.data() + keep, filled_ - keep);
      base_ += keep;
      filled_ -= keep;
      pos_ -= keep;
      if (batch_start_ != kNone) batch_start_ -= keep;
      node_start_ -= std::min(node_start_, keep);
    }
    if (filled_ == capacity()) buf_.resize(capacity() * 2 + kSlack);
  }

  static constexpr size_t kNone = static_cast<size_t>(-1);

  const std::string& path_;
  size_t chunk_;
  unsigned threads_;  // as asked: 0 picks by size
  Graph graph_;
  detail::SchemaCache schemas_;  // one parse per distinct schema across batches
  std::optional<detail::NodeBatchPipeline> pipeline_;  // set when batches go to threads
  std::string buf_;
  size_t filled_ = 0;  // bytes of buf_ holding file data
  size_t pos_ = 0;     // next byte to scan
  size_t base_ = 0;    // file offset of buf_[0]
  State state_ = State::kTop;
  int depth_ = 0;       // outside the nodes array
  int node_depth_ = 0;  // inside the current node
  bool in_string_ = false, escape_ = false, after_comma_ = false;
  bool eof_ = false;
  bool fast_ = true;    // the newline cut still applies
  std::string indent_;  // "\n" + the first node's indentation + "{"
  char last_non_space_ = 0;
  size_t string_start_ = 0;
  std::string last_string_;
  std::string header_;
  size_t batch_start_ = kNone, batch_end_ = kNone, node_start_ = 0;
};

}  // namespace

Graph readTraceStreaming(const std::string& path, size_t chunk_bytes, unsigned threads) {
  const size_t chunk = std::max<size_t>(chunk_bytes, 256);
  {
    StreamingReader reader(path, chunk, threads);
    try {
      return reader.read();
    } catch (const InputError&) {
      if (!reader.parallel()) throw;
    }
  }
  // Bad input, or a layout the threads' cuts misread: one thread reads the
  // file again, and its error (or Graph) is the file's.
  return StreamingReader(path, chunk, 1).read();
}

}  // namespace tracetwin::core
