#include "sweep/et_writer.h"

#include <numeric>

namespace tracetwin::sweep {

using J = nlohmann::json;

namespace {

J shapeOf(const EtTensor& t) { return J(t.shape); }

J inputsJson(std::vector<EtArg> args) {
  J values = J::array(), shapes = J::array(), types = J::array();
  for (EtArg& a : args) {
    values.push_back(std::move(a.value));
    shapes.push_back(std::move(a.shape));
    types.push_back(std::move(a.type));
  }
  return J{{"values", std::move(values)}, {"shapes", std::move(shapes)}, {"types", std::move(types)}};
}

J attr(const char* name, const char* type, J value) {
  return J{{"name", name}, {"type", type}, {"value", std::move(value)}};
}

int64_t product(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::string listText(const std::vector<int64_t>& v) { return J(v).dump(); }

}  // namespace

EtWriter::EtWriter(std::string device) : device_(std::move(device)) {}

EtTensor EtWriter::tensor(std::vector<int64_t> shape, bool int64) {
  EtTensor t;
  t.id = next_tensor_++;
  t.storage = next_tensor_++;
  t.numel = product(shape);
  t.itemsize = int64 ? 8 : 4;
  t.type = int64 ? "Tensor(long int)" : "Tensor(float)";
  t.shape = std::move(shape);
  return t;
}

EtTensor EtWriter::view(const EtTensor& base, std::vector<int64_t> shape, int64_t offset) {
  EtTensor t = base;
  t.id = next_tensor_++;
  t.offset = base.offset + offset;
  t.numel = product(shape);
  t.shape = std::move(shape);
  return t;
}

EtTensor EtWriter::sparse(std::vector<int64_t> shape) {
  EtTensor t;
  t.id = next_tensor_++;
  t.shape = std::move(shape);
  t.recorded_empty = true;
  return t;
}

EtArg EtWriter::undefined() {
  return {J::array({next_tensor_++, 0, 0, 0, 0, ""}), J::array(), "Tensor(nullptr (uninitialized))"};
}

EtArg EtWriter::arg(const EtTensor& t) const {
  if (t.recorded_empty) return {J::array({t.id, 0, 0, 0, 0, ""}), shapeOf(t), t.type};
  return {J::array({t.id, t.storage, t.offset, t.numel, t.itemsize, device_}), shapeOf(t), t.type};
}

EtArg EtWriter::arg(const std::vector<EtTensor>& list) const {
  EtArg out{J::array(), J::array(), "GenericList["};
  for (size_t k = 0; k < list.size(); ++k) {
    EtArg a = arg(list[k]);
    out.value.push_back(std::move(a.value));
    out.shape.push_back(std::move(a.shape));
    out.type += (k ? "," : "") + a.type;
  }
  out.type += "]";
  return out;
}

EtArg EtWriter::i(int64_t v) { return {v, J::array(), "Int"}; }
EtArg EtWriter::d(double v) { return {v, J::array(), "Double"}; }
EtArg EtWriter::b(bool v) { return {v, J::array(), "Bool"}; }
EtArg EtWriter::none() { return {"<None>", J::array(), "None"}; }
EtArg EtWriter::device() const { return {device_, J::array(), "Device"}; }

EtArg EtWriter::ints(const std::vector<int64_t>& v) {
  EtArg a{J(v), J::array(), "GenericList["};
  for (size_t k = 0; k < v.size(); ++k) {
    a.shape.push_back(J::array());
    a.type += k ? ",Int" : "Int";
  }
  a.type += "]";
  return a;
}

J EtWriter::node(int64_t id, int64_t parent, const std::string& name, const std::string& schema,
                 J inputs, J outputs, J extra_attrs) {
  J attrs = J::array({attr("rf_id", "uint64", id), attr("fw_parent", "uint64", 0),
                      attr("seq_id", "int64", -1), attr("scope", "uint64", 0),
                      attr("tid", "uint64", 1), attr("fw_tid", "uint64", 0),
                      attr("op_schema", "string", schema), attr("kernel_backend", "string", ""),
                      attr("kernel_file", "string", "")});
  for (J& a : extra_attrs) attrs.push_back(std::move(a));
  return J{{"id", id},
           {"name", name},
           {"ctrl_deps", parent},
           {"inputs", std::move(inputs)},
           {"outputs", std::move(outputs)},
           {"attrs", std::move(attrs)}};
}

int64_t EtWriter::op(const std::string& schema, std::vector<EtArg> inputs,
                     std::vector<EtArg> outputs) {
  std::string name = schema.substr(0, schema.find('('));
  if (const size_t dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  const int64_t id = next_node_++;
  nodes_.push_back(
      node(id, 2, name, schema, inputsJson(std::move(inputs)), inputsJson(std::move(outputs))));
  return id;
}

int64_t EtWriter::collective(const std::string& name, const EtTensor& in, const EtTensor& out,
                             const std::vector<int64_t>& in_split,
                             const std::vector<int64_t>& out_split, int64_t rank,
                             int64_t world_size) {
  const int64_t id = next_node_++;
  std::vector<EtArg> inputs = {arg(std::vector<EtTensor>{in}),
                               i(seq_++),
                               {J::array({"0", "default_pg"}), J::array({J::array(), J::array()}),
                                "Tuple[String,String]"},
                               i(rank),
                               {name, J::array(), "String"},
                               ints(in_split),
                               ints(out_split),
                               i(0),
                               i(1),
                               i(world_size)};
  J extra = J::array({attr("collective_name", "string", name), attr("dtype", "string", "Float"),
                      attr("in_msg_nelems", "uint64", in.numel),
                      attr("out_msg_nelems", "uint64", out.numel),
                      attr("in_split_size", "string", listText(in_split)),
                      attr("out_split_size", "string", listText(out_split)),
                      attr("global_rank_start", "uint64", 0),
                      attr("global_rank_stride", "uint64", 1), attr("pg_name", "string", "0"),
                      attr("pg_desc", "string", "default_pg"),
                      attr("pg_size", "uint64", world_size)});
  nodes_.push_back(node(id, 2, "record_param_comms", "", inputsJson(std::move(inputs)),
                        inputsJson({arg(std::vector<EtTensor>{out})}), std::move(extra)));
  return id;
}

J EtWriter::finish() {
  nodes_.push_back(node(2, 1, "[pytorch|profiler|execution_trace|thread]", "", inputsJson({}),
                        inputsJson({})));
  nodes_.push_back(node(1, 1, "[pytorch|profiler|execution_trace|process]", "", inputsJson({}),
                        inputsJson({})));
  return J{{"schema", "1.1.0-chakra.0.0.4"}, {"pid", 1},          {"time", "sweep"},
           {"start_ts", 0},                  {"nodes", std::move(nodes_)}, {"finish_ts", 0}};
}

}  // namespace tracetwin::sweep
