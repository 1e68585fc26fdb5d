// Builds small execution-trace graphs by hand for microbenchmarks: the same
// core::Graph a TraceReader produces from a legacy 1.0.1 trace (root id 1,
// one thread node, top-level operator nodes under it), so replay and
// prediction treat a microbenchmark exactly like a captured workload.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::calibration {

// Scope value marking spacer nodes (not measured as samples).
inline constexpr int64_t kSpacerScope = 0x5ACE;

class GraphBuilder {
 public:
  // `device` is written into every tensor ("cpu", "cuda:0").
  explicit GraphBuilder(std::string device = "cpu");

  // A new contiguous tensor with its own storage.
  core::Value tensor(const std::vector<int64_t>& shape, core::DType dtype = core::DType::kFloat32);
  // One tensor per (shape, dtype) for the whole graph, made on first use:
  // the input that every copy of a metadata-only op reads. Views of
  // [4096x512] with one 8 MiB input per copy ran 1.6-2.1 us against 0.4-0.6
  // us for the same views of small tensors (most likely the 64 MiB of inputs
  // rewritten before each iteration left every copy's tensor metadata out of
  // cache), where a view in a training step reads what the op before it made.
  core::Value sharedTensor(const std::vector<int64_t>& shape,
                           core::DType dtype = core::DType::kFloat32);
  // A new tensor id on the storage of `base` (what view ops record).
  core::Value viewOf(const core::Value& base, const std::vector<int64_t>& shape);
  // "Tensor(nullptr (uninitialized))" as traces record an absent Tensor?.
  core::Value undefinedTensor();

  static core::Value intValue(int64_t v);
  static core::Value doubleValue(double v);
  static core::Value boolValue(bool v);
  static core::Value stringValue(const std::string& v);
  static core::Value none();
  core::Value deviceValue() const;
  static core::Value intList(const std::vector<int64_t>& v);
  static core::Value boolList(const std::vector<bool>& v);
  static core::Value tensorList(const std::vector<core::Value>& tensors);

  // Adds one top-level operator. The name and the parsed schema come from
  // `schema_text` (exactly as LibTorch registers it); `tensor_range` is the
  // raw JSON attribute ({"1": [0, 99]}) replay's value generators honour.
  core::NodeId op(const std::string& schema_text, std::vector<core::Value> inputs,
                  std::vector<core::Value> outputs, const std::string& tensor_range = "");

  // Adds a spacer between copies of the op under test: a copy_ of 64 KiB
  // (16 Ki floats) tagged with scope kSpacerScope, whose time is not a
  // sample. It stands for the other work between two ops of a real step, so
  // copies of one op do not run back to back on caches only they use.
  void spacer();

  // A spacer that keeps the core busy for a while without touching much
  // memory: an mm of two n x n float matrices (made on first use, reused),
  // tagged like spacer(). The op after it runs as after a long op of a real
  // step (predictors/host/code_cold.h).
  void busySpacer(int64_t n);

  // A spacer that evicts every cache from what the graph touched before it:
  // a copy_ between two buffers of bytes / 2 (made on first use, reused),
  // tagged like spacer(). The ops after it find their tensors in DRAM, as a
  // training step's optimizer finds the parameters it last touched an
  // iteration ago (predictors/host/cold_tensors.h).
  void flush(int64_t bytes);

  // Appends the ops [first, end) once more on the same inputs: now cache-hot.
  // An output that is not also an input (not in place) gets a new tensor,
  // and a later op of the range that read it reads the new one.
  void repeatOps(core::NodeId first, core::NodeId end);

  // Finalizes and returns the graph; the builder is spent afterwards.
  core::Graph build(const std::string& source_name);

  const std::string& device() const { return device_; }
  // Id the next op() gets: callers mark where one case's ops begin.
  core::NodeId nextNodeId() const { return next_node_; }

 private:
  // repeatOps: what the copies renamed, by old tensor id and old storage id.
  struct Renaming {
    std::map<int64_t, core::Value> tensors;
    std::map<int64_t, int64_t> storages;
  };
  // repeatOps: new ids for the outputs in `v` that are not inputs.
  void renewOutputs(core::Value& v, const std::set<int64_t>& input_ids,
                    const std::set<int64_t>& input_storages, Renaming* renaming);

  std::string device_;
  std::vector<core::Node> nodes_;
  core::NodeId next_node_ = 3;               // 1 = process root, 2 = thread
  int64_t next_tensor_ = 100;                // ids and storage ids share one counter
  std::vector<core::Value> spacer_buffers_;  // made on first use, reused
  std::vector<core::Value> busy_buffers_;
  std::vector<core::Value> flush_buffers_;
  std::map<std::pair<std::vector<int64_t>, core::DType>, core::Value> shared_;
};

// ET type name of a dtype ("float", "long int", "c10::Half") for "Tensor(...)".
std::string traceTypeName(core::DType dtype);

}  // namespace tracetwin::calibration
