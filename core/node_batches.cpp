// The nodes array of a big trace parsed on several threads (see
// node_batches.h). The reading thread cuts and queues batches of ~1 MB; the
// workers and, when they fall behind, the reading thread parse them, each
// with its own simdjson parser (thread-local, core/trace_reader.cpp) and its
// own schema cache in front of the file's.
#include "core/node_batches.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <system_error>

#include "core/errors.h"
#include "core/usable_cores.h"

namespace tracetwin::core::detail {
namespace {

// Below this a trace is read on one thread. scripts/bench-reader-threads.py,
// 1 against 2 threads at load 1.1: 1.0 MB 0.97x (a wash, more CPU), 1.9 MB
// 0.83x, 3.8 MB 0.80x, 26.7 MB 0.70x (docs/trace-format.md, "Performance").
constexpr uint64_t kParallelReadMinBytes = uint64_t{3} << 19;  // 1.5 MiB
// Parsing is memory-bound past a few threads, and each holds a batch and
// simdjson's index of it (~2 MB).
constexpr unsigned kMaxReaderThreads = 8;

}  // namespace

unsigned readerThreads(uint64_t size_hint, unsigned requested) {
  if (requested > 0) return requested;
  if (const char* env = std::getenv("TRACETWIN_READER_THREADS"); env != nullptr && *env != 0) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (*end != 0 || n < 1 || n > 64) {
      throw UsageError(fmt::format(
          "TRACETWIN_READER_THREADS=\"{}\": expected a number of threads from 1 to 64", env));
    }
    return static_cast<unsigned>(n);
  }
  if (size_hint < kParallelReadMinBytes) return 1;
  return std::min(usableCores(), kMaxReaderThreads);
}

NodeBatchPipeline::NodeBatchPipeline(const std::string& source, unsigned threads,
                                     SchemaCache& shared)
    : source_(source), shared_(shared), own_schemas_(&shared) {
  const unsigned workers = threads > 1 ? threads - 1 : 0;
  workers_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i) {
    try {
      workers_.emplace_back([this] { workerLoop(); });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones started (or this one) parse
    }
  }
}

NodeBatchPipeline::~NodeBatchPipeline() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void NodeBatchPipeline::workerLoop() {
  SchemaCache schemas(&shared_);
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [this] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      job = pending_.front();
      pending_.pop_front();
    }
    parse(*job, schemas);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      complete(*job);
    }
    done_.notify_all();
  }
}

void NodeBatchPipeline::parse(Job& job, SchemaCache& schemas) {
  try {
    const NodeBatchText& t = job.text;
    const simdjson::padded_string_view view(t.buffer.data() + t.begin, t.length,
                                            t.buffer.capacity() - t.begin);
    job.nodes.reserveNodes(t.length / 256);  // as readNodes: >= ~250 bytes a node
    const size_t after = TraceParser(view, source_, t.base, &schemas).parseNodeArray(job.nodes);
    if (after != std::string_view::npos) {
      throw InputError(fmt::format("{}: byte {}: the nodes array ends inside a batch", source_,
                                   t.base + after));
    }
  } catch (...) {
    job.error = std::current_exception();  // rethrown in file order by appendFinished
  }
}

bool NodeBatchPipeline::runOnePending(size_t more_than) {
  Job* job = nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.size() <= more_than) return false;
    job = pending_.front();
    pending_.pop_front();
  }
  parse(*job, own_schemas_);
  const std::lock_guard<std::mutex> lock(mutex_);
  complete(*job);
  return true;
}

// The text is not needed once parsed: its buffer takes the reader's next
// chunk (already-touched pages), or is freed, whether or not the batches
// before it are done (a worker descheduled on a busy host holds up only
// its own batch's nodes, not every later batch's text).
void NodeBatchPipeline::complete(Job& job) {
  job.done = true;
  --unfinished_;
  if (spare_.size() < workers_.size() + 2) {
    spare_.push_back(std::move(job.text.buffer));
  } else {
    std::string().swap(job.text.buffer);
  }
}

void NodeBatchPipeline::submit(NodeBatchText batch, Graph& graph) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    order_.push_back(std::make_unique<Job>());
    order_.back()->text = std::move(batch);
    pending_.push_back(order_.back().get());
    ++unfinished_;
  }
  work_.notify_one();
  // More queued than the workers can take: reading on would only queue more
  // (and hold more memory), so this thread parses the oldest one.
  while (runOnePending(workers_.size())) {
  }
  appendFinished(graph);
}

void NodeBatchPipeline::finish(Graph& graph) {
  while (runOnePending(0)) {
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return unfinished_ == 0; });
  }
  appendFinished(graph);
}

void NodeBatchPipeline::appendFinished(Graph& graph) {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (order_.empty() || !order_.front()->done) return;
      job = std::move(order_.front());
      order_.pop_front();
    }
    if (job->error) std::rethrow_exception(job->error);
    graph.appendNodes(std::move(job->nodes));
  }
}

std::string NodeBatchPipeline::spareBuffer() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.empty()) return std::string();
  std::string buffer = std::move(spare_.back());
  spare_.pop_back();
  return buffer;
}

}  // namespace tracetwin::core::detail
