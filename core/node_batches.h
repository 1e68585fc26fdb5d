// Internal to core: the nodes array of a big trace parsed on several threads.
// The streaming reader (trace_stream.cpp) cuts the array into batches of
// whole nodes as it reads; each batch is parsed as its own padded document
// by whichever thread takes it, into its own node vector, and the batches'
// nodes are appended to the Graph in file order, so the Graph is the same
// whatever order the threads finish in. Not for other layers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/graph.h"
#include "core/trace_parser.h"

namespace tracetwin::core::detail {

// How many threads parse a file of about `size_hint` bytes. `requested`:
// 0 picks by size (one below kParallelReadMinBytes, else the usable cores,
// at most kMaxReaderThreads; TRACETWIN_READER_THREADS overrides), any other
// number is used as is (tests read small traces K-way with it).
unsigned readerThreads(uint64_t size_hint, unsigned requested);

// One batch: buffer[begin, begin + length) holds "[" node, ... node "]"
// with SIMDJSON_PADDING bytes of buffer capacity after it; `base` is the
// file offset of buffer[begin], so errors name the offset in the file.
struct NodeBatchText {
  std::string buffer;
  size_t begin = 0;
  size_t length = 0;
  size_t base = 0;
};

class NodeBatchPipeline {
 public:
  // `threads` parsers in all: threads - 1 workers, plus the reading thread,
  // which parses a batch itself whenever the workers fall behind (that also
  // bounds the batches held at once to about 2 x threads).
  NodeBatchPipeline(const std::string& source, unsigned threads, SchemaCache& shared);
  ~NodeBatchPipeline();  // stops the workers after their current batch
  NodeBatchPipeline(const NodeBatchPipeline&) = delete;
  NodeBatchPipeline& operator=(const NodeBatchPipeline&) = delete;

  // Queues a batch, then appends the batches finished so far, in file order,
  // to `graph`. Rethrows the InputError of the first failed batch, and
  // throws one when a batch's array ended before its text did (the cut was
  // not at the end of the nodes): the reader then reads the file again on
  // one thread, which reports the error (or reads the layout) exactly.
  void submit(NodeBatchText batch, Graph& graph);
  // Waits for every batch and appends the rest; throws like submit.
  void finish(Graph& graph);
  // A buffer a parsed batch no longer needs (its capacity is kept), or an
  // empty string: the reader's next chunk goes there without fresh pages.
  std::string spareBuffer();

 private:
  struct Job {
    NodeBatchText text;
    Graph nodes;
    std::exception_ptr error;
    bool done = false;
  };

  void workerLoop();
  void parse(Job& job, SchemaCache& schemas);
  // Runs the oldest batch no worker has taken; false when there is none.
  bool runOnePending(size_t more_than);
  void appendFinished(Graph& graph);
  void complete(Job& job);  // under mutex_

  const std::string& source_;
  SchemaCache& shared_;
  SchemaCache own_schemas_;  // the reading thread's, in front of shared_
  std::mutex mutex_;
  std::condition_variable work_;  // a batch was queued, or stop
  std::condition_variable done_;  // a batch was parsed
  std::deque<std::unique_ptr<Job>> order_;  // not yet appended, file order
  std::deque<Job*> pending_;                // not yet taken by a thread
  size_t unfinished_ = 0;                   // queued or being parsed
  std::vector<std::string> spare_;          // parsed batches' buffers
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace tracetwin::core::detail
