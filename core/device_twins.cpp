#include "core/device_twins.h"

#include <fmt/core.h>

#include <memory>
#include <unordered_map>

#include "core/errors.h"
#include "core/op_schema.h"

namespace tracetwin::core {
namespace {

Value boolValue(bool b) {
  Value v;
  v.kind = ValueKind::kBool;
  v.type = "Bool";
  v.bool_value = b;
  return v;
}

Value noneValue() {
  Value v;
  v.kind = ValueKind::kNone;
  v.type = "None";
  return v;
}

Value intList(const std::vector<int64_t>& xs) {
  Value v;
  v.kind = ValueKind::kList;
  std::string type = "GenericList[";
  for (size_t i = 0; i < xs.size(); ++i) {
    Value e;
    e.kind = ValueKind::kInt;
    e.type = "Int";
    e.int_value = xs[i];
    v.elements.push_back(e);
    type += i ? ",Int" : "Int";
  }
  v.type = type + "]";
  return v;
}

Value boolList(size_t n, bool b) {
  Value v;
  v.kind = ValueKind::kList;
  std::string type = "GenericList[";
  for (size_t i = 0; i < n; ++i) {
    v.elements.push_back(boolValue(b));
    type += i ? ",Bool" : "Bool";
  }
  v.type = type + "]";
  return v;
}

// Picks recorded inputs by position; throws when the node has too few.
std::vector<Value> pick(const Node& n, const std::vector<int>& positions) {
  std::vector<Value> out;
  out.reserve(positions.size());
  for (int p : positions) {
    if (p < 0) {
      out.push_back(noneValue());
      continue;
    }
    if (static_cast<size_t>(p) >= n.inputs.size()) {
      throw InputError(fmt::format("node {} ({}): {} recorded inputs, substitution needs input {}",
                                   n.id, n.name, n.inputs.size(), p));
    }
    out.push_back(n.inputs[static_cast<size_t>(p)]);
  }
  return out;
}

const char* kNativeBatchNorm =
    "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)";
const char* kNativeBatchNormBackward =
    "aten::native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
    "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
    "bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)";
const char* kConvolution =
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
    "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor";

// cudnn/miopen_batch_norm_backward(input, grad_output, weight, running_mean,
// running_var, save_mean, save_var, epsilon[, reserve]): cuDNN saves the
// inverse std in save_var, which is what native_batch_norm_backward takes.
std::vector<Value> batchNormBackwardInputs(const Node& n) {
  auto v = pick(n, {1, 0, 2, 3, 4, 5, 6});
  v.push_back(boolValue(true));
  v.push_back(pick(n, {7})[0]);
  v.push_back(boolList(3, true));
  return v;
}

// cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark,
// deterministic, allow_tf32) -> convolution(input, weight, None, stride,
// padding, dilation, false, [0..], groups).
std::vector<Value> convolutionInputs(const Node& n) {
  auto v = pick(n, {0, 1, -1, 3, 2, 4});
  v.push_back(boolValue(false));
  v.push_back(intList(std::vector<int64_t>(v[4].elements.empty() ? 2 : v[4].elements.size(), 0)));
  v.push_back(pick(n, {5})[0]);
  return v;
}

// cudnn_convolution_transpose(self, weight, padding, output_padding, stride,
// dilation, groups, ...) -> convolution(..., transposed=true, ...).
std::vector<Value> convolutionTransposeInputs(const Node& n) {
  auto v = pick(n, {0, 1, -1, 4, 2, 5});
  v.push_back(boolValue(true));
  auto rest = pick(n, {3, 6});
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

const std::vector<std::pair<std::string, SubstitutionRule>> kRegistry = {
    {"aten::cudnn_batch_norm",
     {"aten::native_batch_norm",
      kNativeBatchNorm,
      "same inputs; the 4th output (cuDNN reserve space) is not produced",
      [](const Node& n) {
        return pick(n, {0, 1, 2, 3, 4, 5, 6, 7});
      },
      {0, 1, 2}}},
    {"aten::cudnn_batch_norm_backward",
     {"aten::native_batch_norm_backward",
      kNativeBatchNormBackward,
      "grad/input swapped, reserve space dropped, train=true and output_mask=[1,1,1] added",
      batchNormBackwardInputs,
      {0, 1, 2}}},
    {"aten::miopen_batch_norm",
     {"aten::native_batch_norm",
      kNativeBatchNorm,
      "same inputs and outputs",
      [](const Node& n) {
        return pick(n, {0, 1, 2, 3, 4, 5, 6, 7});
      },
      {0, 1, 2}}},
    {"aten::miopen_batch_norm_backward",
     {"aten::native_batch_norm_backward",
      kNativeBatchNormBackward,
      "grad/input swapped, train=true and output_mask=[1,1,1] added",
      batchNormBackwardInputs,
      {0, 1, 2}}},
    {"aten::cudnn_convolution",
     {"aten::convolution",
      kConvolution,
      "bias=None, stride/padding reordered, benchmark/deterministic/tf32 flags dropped",
      convolutionInputs,
      {0}}},
    {"aten::cudnn_convolution_transpose",
     {"aten::convolution",
      kConvolution,
      "bias=None, transposed=true, benchmark/deterministic/tf32 flags dropped",
      convolutionTransposeInputs,
      {0}}},
    {"aten::_cudnn_ctc_loss",
     {"aten::_ctc_loss",
      "aten::_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] "
      "target_lengths, "
      "int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)",
      "deterministic flag dropped",
      [](const Node& n) {
        return pick(n, {0, 1, 2, 3, 4, 6});
      },
      {0, 1}}},
};

}  // namespace

const std::vector<std::pair<std::string, SubstitutionRule>>& substitutionRegistry() {
  return kRegistry;
}

std::optional<Node> substituteForDevice(const Node& node, bool target_is_cpu) {
  if (!target_is_cpu) return std::nullopt;  // the CUDA build of LibTorch has cuDNN ops
  static const std::unordered_map<std::string, const SubstitutionRule*> index = [] {
    std::unordered_map<std::string, const SubstitutionRule*> m;
    for (const auto& [name, rule] : kRegistry) m.emplace(name, &rule);
    return m;
  }();
  // Each twin's schema parsed once and shared, as the reader shares the
  // recorded ones: a prediction substitutes every cuDNN op of a trace.
  static const std::unordered_map<const SubstitutionRule*, std::shared_ptr<const OpSchema>>
      schemas = [] {
        std::unordered_map<const SubstitutionRule*, std::shared_ptr<const OpSchema>> m;
        for (const auto& [name, rule] : kRegistry)
          m.emplace(&rule, std::make_shared<const OpSchema>(
                               parseOpSchema(rule.to_schema, "substitution registry")));
        return m;
      }();
  const std::string key = node.schema ? node.schema->qualifiedName() : node.name.str();
  auto it = index.find(key);
  if (it == index.end()) {
    // A cuDNN/MIOpen op the registry has no twin for would reach the CPU
    // dispatcher and fail there with a list of backends; say why instead.
    for (const char* prefix :
         {"aten::cudnn_", "aten::_cudnn_", "aten::miopen_", "aten::_miopen_"}) {
      if (key.rfind(prefix, 0) == 0) {
        throw InputError(fmt::format(
            "{} runs only on GPUs (cuDNN/MIOpen) and has no CPU equivalent in the substitution "
            "registry; replay this trace with --device cuda",
            key));
      }
    }
    return std::nullopt;
  }
  const SubstitutionRule& rule = *it->second;

  Node twin = node;
  twin.name = rule.to;
  twin.op_schema_text = rule.to_schema;
  twin.schema = schemas.at(&rule);
  twin.inputs = rule.map_inputs(node);
  twin.outputs.clear();
  for (size_t from : rule.output_map) {
    if (from < node.outputs.size()) twin.outputs.push_back(node.outputs[from]);
  }
  twin.tensor_range.clear();  // input positions changed
  return twin;
}

}  // namespace tracetwin::core
