#include "predictors/kernels/rnn_steps.h"

#include <cstdint>
#include <utility>

#include "predictors/kernels/node_args.h"

namespace tracetwin::predictors {
namespace {

enum class Cell { kLstm, kGru, kTanh, kRelu };

struct RnnShape {
  Cell cell = Cell::kLstm;
  int64_t gates = 4;  // rows of w_hh per hidden unit
  int64_t steps = 0, batch = 0, input = 0, hidden = 0;
  int64_t output = 0;  // the hidden state's width: hidden, or the projection's
  int64_t layers = 1, directions = 1;
  bool biases = true;
  core::TensorValue like;  // dtype, itemsize and device of the step tensors
};

bool cellOf(const std::string& name, Cell* cell) {
  static const std::pair<const char*, Cell> kCells[] = {{"lstm", Cell::kLstm},
                                                        {"gru", Cell::kGru},
                                                        {"rnn_tanh", Cell::kTanh},
                                                        {"rnn_relu", Cell::kRelu}};
  const std::string op = baseOpName(name);
  for (const auto& [cell_op, c] : kCells) {
    if (op == cell_op) {
      *cell = c;
      return true;
    }
  }
  return false;
}

int64_t gatesOf(Cell cell) {
  switch (cell) {
    case Cell::kLstm:
      return 4;
    case Cell::kGru:
      return 3;
    default:
      return 1;
  }
}

// The parameter tensors (weights and biases of every layer and direction).
std::vector<const core::TensorValue*> params(const core::Node& rnn) {
  std::vector<const core::TensorValue*> out;
  const size_t i = argIndex(rnn, "params", 2);
  if (i >= rnn.inputs.size()) return out;
  core::forEachTensor(rnn.inputs[i], [&](const core::TensorValue& t) { out.push_back(&t); });
  return out;
}

// The packed-sequence overload (data, batch_sizes, ...): its steps shrink
// with the batch sizes, which the trace does not record.
bool packed(const core::Node& rnn) {
  if (rnn.schema) return argIndex(rnn, "batch_sizes", SIZE_MAX) != SIZE_MAX;
  const core::TensorValue* second = tensorArg(rnn, "", 1);
  return second != nullptr && second->shape.size() == 1 && second->dtype == core::DType::kInt64;
}

bool readShape(const core::Node& rnn, RnnShape* s) {
  if (!cellOf(rnn.name, &s->cell) || packed(rnn)) return false;
  s->gates = gatesOf(s->cell);
  const core::TensorValue* input = tensorArg(rnn, "input", 0);
  if (input == nullptr || input->shape.size() < 2 || input->shape.size() > 3) return false;
  s->biases = intArg(rnn, "has_biases", 3, 1) != 0;
  s->layers = intArg(rnn, "num_layers", 4, 1);
  s->directions = intArg(rnn, "bidirectional", 7, 0) != 0 ? 2 : 1;
  const bool batch_first = intArg(rnn, "batch_first", 8, 0) != 0;
  const auto& dims = input->shape;
  if (dims.size() == 2) {  // unbatched: [T, I]
    s->steps = dims[0];
    s->batch = 1;
  } else {
    s->steps = batch_first ? dims[1] : dims[0];
    s->batch = batch_first ? dims[0] : dims[1];
  }
  s->input = dims.back();
  // At least w_ih and w_hh per layer and direction.
  const auto p = params(rnn);
  if (s->layers < 1 || p.size() < size_t(s->layers * s->directions) * 2) return false;
  const core::TensorValue& w_hh = *p[1];
  if (w_hh.shape.size() != 2 || w_hh.shape[0] % s->gates != 0) return false;
  s->hidden = w_hh.shape[0] / s->gates;
  s->output = w_hh.shape[1];  // LSTM with proj_size: w_hh is [4H, P]
  if (s->steps < 1 || s->batch < 1 || s->hidden < 1) return false;
  s->like = *input;
  return true;
}

core::Value tensorOf(const RnnShape& s, std::vector<int64_t> shape,
                     std::vector<int64_t> strides = {}) {
  return standInTensor(s.like, std::move(shape), std::move(strides));
}

// A [batch, hidden] slice of the [batch, gates * hidden] gate matrix.
core::Value gateSlice(const RnnShape& s) {
  return tensorOf(s, {s.batch, s.hidden}, {s.gates * s.hidden, 1});
}

core::Value state(const RnnShape& s, int64_t width) { return tensorOf(s, {s.batch, width}); }

// linear(x [rows, in], w [gates * hidden, in], b) -> [rows, gates * hidden].
core::Node linear(const RnnShape& s, std::vector<int64_t> x_shape, int64_t in) {
  std::vector<int64_t> out_shape = x_shape;
  out_shape.back() = s.gates * s.hidden;
  core::Value bias = s.biases ? tensorOf(s, {s.gates * s.hidden}) : core::Value{};
  return standInNode("aten::linear",
                     {tensorOf(s, std::move(x_shape)), tensorOf(s, {s.gates * s.hidden, in}), bias},
                     {tensorOf(s, std::move(out_shape))});
}

// The cell's arithmetic after the step's linear, as ATen's cells write it.
void cellOps(const RnnShape& s, std::vector<StandInOp>* out) {
  auto add = [&](std::string name, std::vector<core::Value> in, core::Value result) {
    out->push_back(
        {standInNode(std::move(name), std::move(in), {std::move(result)}), double(s.steps)});
  };
  const int64_t h = s.hidden;
  const core::Value gates = state(s, s.gates * h);
  switch (s.cell) {
    case Cell::kLstm:
      // gates.add_(projected input); i, f, o sigmoid_, g tanh_ in place on
      // the chunks; cy = f * cx + i * g; hy = o * tanh(cy).
      add("aten::add_", {gates, gates}, gates);
      for (const char* op : {"aten::sigmoid_", "aten::sigmoid_", "aten::tanh_", "aten::sigmoid_"})
        add(op, {gateSlice(s)}, gateSlice(s));
      add("aten::mul", {gateSlice(s), state(s, h)}, state(s, h));
      add("aten::mul", {gateSlice(s), gateSlice(s)}, state(s, h));
      add("aten::add_", {state(s, h), state(s, h)}, state(s, h));
      add("aten::tanh", {state(s, h)}, state(s, h));
      add("aten::mul", {gateSlice(s), state(s, h)}, state(s, h));
      break;
    case Cell::kGru:
      // r, z = sigmoid_(hidden gate += input gate); n = tanh_(i_n + h_n * r);
      // hy = (h - n) * z + n.
      for (int k = 0; k < 2; ++k) {
        add("aten::add_", {gateSlice(s), gateSlice(s)}, gateSlice(s));
        add("aten::sigmoid_", {gateSlice(s)}, gateSlice(s));
      }
      add("aten::mul_", {gateSlice(s), gateSlice(s)}, gateSlice(s));
      add("aten::add", {gateSlice(s), gateSlice(s)}, state(s, h));
      add("aten::tanh_", {state(s, h)}, state(s, h));
      add("aten::sub", {state(s, h), state(s, h)}, state(s, h));
      add("aten::mul_", {state(s, h), gateSlice(s)}, state(s, h));
      add("aten::add_", {state(s, h), state(s, h)}, state(s, h));
      break;
    case Cell::kTanh:
    case Cell::kRelu:
      add("aten::add_", {gates, gates}, gates);
      add(s.cell == Cell::kTanh ? "aten::tanh" : "aten::relu", {gates}, gates);
      break;
  }
}

// A list of `count` copies of `tensor`, as stack and cat take them.
core::Value tensorList(int64_t count, const core::Value& tensor) {
  core::Value list;
  list.kind = core::ValueKind::kList;
  list.type = "GenericList[Tensor]";
  list.elements.assign(size_t(count), tensor);
  return list;
}

// stack of `count` [batch, width] tensors along a new first dim.
core::Node stack(const RnnShape& s, int64_t count, int64_t width) {
  core::Value dim;
  dim.kind = core::ValueKind::kInt;
  dim.type = "Int";
  return standInNode("aten::stack", {tensorList(count, state(s, width)), dim},
                     {tensorOf(s, {count, s.batch, width})});
}

}  // namespace

std::vector<StandInOp> rnnSteps(const core::Node& rnn) {
  RnnShape s;
  if (!readShape(rnn, &s)) return {};
  std::vector<StandInOp> parts;
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    const int64_t in = layer == 0 ? s.input : s.output * s.directions;
    for (int64_t d = 0; d < s.directions; ++d) {
      parts.push_back({linear(s, {s.steps, s.batch, in}, in), 1.0});
      parts.push_back({linear(s, {s.batch, s.output}, s.output), double(s.steps)});
      cellOps(s, &parts);
      if (s.output != s.hidden) {  // LSTM projection: hy = hy @ w_hr^T
        core::Node proj =
            standInNode("aten::matmul", {state(s, s.hidden), tensorOf(s, {s.hidden, s.output})},
                        {state(s, s.output)});
        parts.push_back({std::move(proj), double(s.steps)});
      }
      parts.push_back({stack(s, s.steps, s.output), 1.0});
    }
    if (s.directions == 2) {  // the two directions' outputs side by side
      parts.push_back(
          {standInNode("aten::cat", {tensorList(2, tensorOf(s, {s.steps, s.batch, s.output}))},
                       {tensorOf(s, {s.steps, s.batch, 2 * s.output})}),
           1.0});
    }
  }
  // The final hidden (and cell) states of every layer, stacked.
  const int64_t finals = s.cell == Cell::kLstm ? 2 : 1;
  for (int64_t k = 0; k < finals; ++k)
    parts.push_back({stack(s, s.layers * s.directions, k == 0 ? s.output : s.hidden), 1.0});
  return parts;
}

}  // namespace tracetwin::predictors
