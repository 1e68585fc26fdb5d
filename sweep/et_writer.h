// Writes execution traces op by op (schema 1.1.0-chakra.0.0.4, the layout
// core::parseTrace reads): tensors as [id, storage, offset, numel, itemsize,
// device], one thread node under the process root, every op a top-level
// operator under it. The sweep's per-rank steps are built with it, so the
// graphs the predictor and the replayer take are exactly the files
// `sweep --emit-traces` writes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracetwin::sweep {

struct EtTensor {
  int64_t id = 0;
  int64_t storage = 0;  // 0: undefined or sparse (PyTorch 1.13 records no storage for either)
  int64_t offset = 0;   // elements
  int64_t numel = 0;
  int64_t itemsize = 4;
  std::vector<int64_t> shape;
  std::string type = "Tensor(float)";
  bool recorded_empty = false;  // written as [id,0,0,0,0,""] (sparse gradients)
};

// One argument: its value, shape and type as the trace records them.
struct EtArg {
  nlohmann::json value;
  nlohmann::json shape;
  std::string type;
};

class EtWriter {
 public:
  explicit EtWriter(std::string device = "cpu");

  EtTensor tensor(std::vector<int64_t> shape, bool int64 = false);  // a new storage
  // A new tensor id on `base`'s storage, `offset` elements in.
  EtTensor view(const EtTensor& base, std::vector<int64_t> shape, int64_t offset = 0);
  // A sparse tensor: PyTorch 1.13 records it as [id,0,0,0,0,""] with its
  // dense shape.
  EtTensor sparse(std::vector<int64_t> shape);
  EtArg undefined();  // Tensor(nullptr (uninitialized))

  EtArg arg(const EtTensor& t) const;
  EtArg arg(const std::vector<EtTensor>& list) const;
  static EtArg i(int64_t v);
  static EtArg d(double v);
  static EtArg b(bool v);
  static EtArg none();
  EtArg device() const;
  static EtArg ints(const std::vector<int64_t>& v);

  // A top-level operator; the name is the schema's up to '(' without the
  // overload. Returns its node id.
  int64_t op(const std::string& schema, std::vector<EtArg> inputs, std::vector<EtArg> outputs);
  // record_param_comms of one collective on the world group (as PyTorch >=
  // 2.1 records it; 1.13's Gloo labels carry no split sizes, and an uneven
  // all_to_allv needs them).
  int64_t collective(const std::string& name, const EtTensor& in, const EtTensor& out,
                     const std::vector<int64_t>& in_split, const std::vector<int64_t>& out_split,
                     int64_t rank, int64_t world_size);

  int64_t nextNodeId() const { return next_node_; }
  nlohmann::json finish();  // the whole trace; the writer is spent

 private:
  nlohmann::json node(int64_t id, int64_t parent, const std::string& name,
                      const std::string& schema, nlohmann::json inputs, nlohmann::json outputs,
                      nlohmann::json extra_attrs = nlohmann::json::array());
  std::string device_;
  nlohmann::json nodes_ = nlohmann::json::array();
  int64_t next_node_ = 3;      // 1: process root, 2: thread
  int64_t next_tensor_ = 10;   // ids and storages share one counter
  int64_t seq_ = 0;
};

}  // namespace tracetwin::sweep
