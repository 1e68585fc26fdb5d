// One name-keyed table from op name to op family, shared by replay,
// calibration and prediction. Names are looked up after a few normalising
// steps (overload, in-place suffix, backend prefix, backward suffix), so that
// e.g. "aten::cudnn_convolution_backward" finds "convolution".
#include "core/op_family.h"

#include <array>
#include <string_view>
#include <unordered_map>

#include "core/text.h"

namespace tracetwin::core {
namespace {

struct FamilyEntry {
  const char* name;  // op name without namespace, overload or trailing '_'
  const char* family;
};

// Families of the ops seen in the public sample traces (resnet, linear, DLRM,
// PT2) plus their common neighbours. Backward variants are found through the
// suffix rules below, so they need no row of their own unless they differ.
// clang-format off
constexpr FamilyEntry kFamilyTable[] = {
    // GEMM: dense matrix products.
    {"mm", "gemm"},
    {"addmm", "gemm"},
    {"bmm", "gemm"},
    {"baddbmm", "gemm"},
    {"matmul", "gemm"},
    {"linear", "gemm"},
    {"addbmm", "gemm"},
    {"addmv", "gemm"},
    {"mv", "gemm"},
    {"dot", "gemm"},
    {"einsum", "gemm"},
    {"scaled_dot_product_attention", "gemm"},
    // Convolution.
    {"conv1d", "conv"},
    {"conv2d", "conv"},
    {"conv3d", "conv"},
    {"convolution", "conv"},
    {"conv_transpose1d", "conv"},
    {"conv_transpose2d", "conv"},
    {"conv_transpose3d", "conv"},
    // cudnn_/mkldnn_convolution_transpose once the backend prefix is off;
    // LibTorch's CPU kernels under conv_transpose2d/3d.
    {"convolution_transpose", "conv"},
    {"slow_conv_transpose2d", "conv"},
    {"slow_conv_transpose3d", "conv"},
    {"convolution_overrideable", "conv"},
    {"depthwise_conv2d", "conv"},
    {"conv_depthwise2d", "conv"},
    // Embedding lookups (sparse features of recommendation models).
    {"embedding", "embedding_bag"},
    {"embedding_bag", "embedding_bag"},
    {"embedding_dense", "embedding_bag"},
    {"embedding_sparse", "embedding_bag"},
    {"dense_embedding_codegen_lookup_function", "embedding_bag"},
    {"split_embedding_codegen_lookup_adagrad_function", "embedding_bag"},
    {"split_embedding_codegen_lookup_sgd_function", "embedding_bag"},
    {"split_embedding_codegen_lookup_rowwise_adagrad_function", "embedding_bag"},
    // Normalisations.
    {"batch_norm", "norm"},
    {"native_batch_norm", "norm"},
    {"batch_norm_impl_index", "norm"},
    {"native_batch_norm_legit", "norm"},
    {"layer_norm", "norm"},
    {"native_layer_norm", "norm"},
    {"group_norm", "norm"},
    {"native_group_norm", "norm"},
    {"instance_norm", "norm"},
    {"rms_norm", "norm"},
    {"fused_rms_norm", "norm"},
    // Softmax and losses built on it.
    {"softmax", "softmax"},
    {"log_softmax", "softmax"},
    {"softmax_backward_data", "softmax"},
    {"log_softmax_backward_data", "softmax"},
    {"cross_entropy_loss", "softmax"},
    // Reductions (and pooling, which reduces windows).
    {"sum", "reduction"},
    {"mean", "reduction"},
    {"max", "reduction"},
    {"min", "reduction"},
    {"amax", "reduction"},
    {"amin", "reduction"},
    {"argmax", "reduction"},
    {"argmin", "reduction"},
    {"prod", "reduction"},
    {"norm", "reduction"},
    {"linalg_vector_norm", "reduction"},
    {"var", "reduction"},
    {"std", "reduction"},
    {"var_mean", "reduction"},
    {"cumsum", "reduction"},
    {"cumprod", "reduction"},
    {"logsumexp", "reduction"},
    {"all", "reduction"},
    {"any", "reduction"},
    {"nll_loss", "reduction"},
    {"nll_loss_forward", "reduction"},
    {"nll_loss_nd", "reduction"},
    {"nll_loss2d", "reduction"},
    {"mse_loss", "reduction"},
    {"l1_loss", "reduction"},
    {"binary_cross_entropy", "reduction"},
    {"binary_cross_entropy_with_logits", "reduction"},
    {"max_pool1d", "reduction"},
    {"max_pool2d", "reduction"},
    {"max_pool3d", "reduction"},
    {"max_pool2d_with_indices", "reduction"},
    {"max_pool3d_with_indices", "reduction"},
    {"avg_pool1d", "reduction"},
    {"avg_pool2d", "reduction"},
    {"avg_pool3d", "reduction"},
    {"adaptive_avg_pool1d", "reduction"},
    {"adaptive_avg_pool2d", "reduction"},
    {"adaptive_avg_pool3d", "reduction"},
    {"adaptive_max_pool2d", "reduction"},
    {"asynchronous_complete_cumsum", "reduction"},
    {"topk", "reduction"},
    {"sort", "reduction"},
    // Copies, concatenation, transposes that move data, gathers and scatters.
    {"copy", "copy"},
    {"to", "copy"},
    {"to_copy", "copy"},
    {"clone", "copy"},
    {"contiguous", "copy"},
    {"cat", "copy"},
    {"concat", "copy"},
    {"concatenate", "copy"},
    {"stack", "copy"},
    {"index", "copy"},
    {"index_put", "copy"},
    {"index_put_impl", "copy"},
    {"index_select", "copy"},
    {"index_add", "copy"},
    {"gather", "copy"},
    {"scatter", "copy"},
    {"scatter_add", "copy"},
    {"masked_select", "copy"},
    {"pin_memory", "copy"},
    {"local_scalar_dense", "copy"},
    {"item", "copy"},
    {"repeat", "copy"},
    {"flatten_dense_tensors", "copy"},
    {"unflatten_dense_tensors", "copy"},
    {"permute_2D_sparse_data", "copy"},
    {"slice_backward", "copy"},
    {"select_backward", "copy"},
    {"constant_pad_nd", "copy"},
    {"pad", "copy"},
    {"roll", "copy"},
    {"flip", "copy"},
    {"tril", "copy"},
    {"triu", "copy"},
    {"nonzero", "copy"},
    {"masked_scatter", "copy"},
    // Views and metadata-only ops: no kernel, near-constant CPU cost.
    {"view", "view"},
    {"reshape", "view"},
    {"reshape_alias", "view"},
    {"unsafe_view", "view"},
    {"as_strided", "view"},
    {"t", "view"},
    {"transpose", "view"},
    {"permute", "view"},
    {"expand", "view"},
    {"expand_as", "view"},
    {"squeeze", "view"},
    {"unsqueeze", "view"},
    {"flatten", "view"},
    {"unflatten", "view"},
    {"narrow", "view"},
    {"slice", "view"},
    {"select", "view"},
    {"split", "view"},
    {"split_with_sizes", "view"},
    {"chunk", "view"},
    {"unbind", "view"},
    {"detach", "view"},
    {"alias", "view"},
    {"numpy_T", "view"},
    {"view_as", "view"},
    {"resolve_conj", "view"},
    {"resolve_neg", "view"},
    {"lift_fresh", "view"},
    {"empty", "view"},
    {"empty_like", "view"},
    {"empty_strided", "view"},
    {"new_empty", "view"},
    {"new_empty_strided", "view"},
    {"resize", "view"},
    {"set", "view"},
    {"result_type", "view"},
    {"is_pinned", "view"},
    {"record_stream", "view"},
    {"size", "view"},
    {"stride", "view"},
    {"dim", "view"},
    {"is_nonzero", "view"},
    {"is_same_size", "view"},
    {"is_contiguous", "view"},
    {"numel", "view"},
    {"sym_size", "view"},
    {"sym_numel", "view"},
    {"is_floating_point", "view"},
    {"is_complex", "view"},
    // Communication (c10d ops are labels for selection, but name them anyway).
    {"record_param_comms", "comm"},
    {"allreduce", "comm"},
    {"allgather", "comm"},
    {"allgather_into_tensor_coalesced", "comm"},
    {"all_gather_into_tensor", "comm"},
    {"reduce_scatter", "comm"},
    {"reduce_scatter_tensor", "comm"},
    {"alltoall", "comm"},
    {"alltoall_base", "comm"},
    {"broadcast", "comm"},
    {"barrier", "comm"},
    {"send", "comm"},
    {"recv", "comm"},
    {"all_reduce", "comm"},
    {"all_gather", "comm"},
    {"all_to_all", "comm"},
    {"wait_tensor", "comm"},
};
// clang-format on

// Elementwise ops are many; they are the default for a small set of name
// shapes and for these explicit names.
// clang-format off
constexpr const char* kElementwiseNames[] = {
    "add", "sub", "mul", "div", "divide", "neg", "abs", "exp", "log", "log1p", "sqrt", "rsqrt",
    "pow", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "silu", "hardtanh", "leaky_relu",
    "elu", "clamp", "clamp_min", "clamp_max", "threshold", "where", "fill", "zero", "zeros",
    "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full",
    "arange", "rand", "randn", "rand_like", "randn_like", "normal", "uniform", "bernoulli",
    "dropout", "native_dropout", "addcdiv", "addcmul", "lerp", "remainder", "fmod", "floor",
    "ceil", "round", "sign", "reciprocal", "maximum", "minimum", "eq", "ne", "lt", "le", "gt",
    "ge", "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "masked_fill",
    "mish", "softplus", "hardswish", "hardsigmoid", "erf", "square", "sub_", "rsub",
    "foreach_add", "foreach_mul", "foreach_addcdiv", "foreach_addcmul", "foreach_sqrt",
    "foreach_div", "foreach_sub", "foreach_lerp", "foreach_zero", "foreach_copy",
    "fused_adam", "fused_adamw", "fused_sgd", "gelu_backward", "silu_backward",
    "sigmoid_backward", "tanh_backward", "threshold_backward", "hardtanh_backward",
    "native_dropout_backward", "type_as", "float", "half", "bfloat16", "isnan", "isinf",
    "nan_to_num", "bounds_check_indices",
    // Fills of a gradient with one value written per row: write-bound, like zero_.
    "nll_loss_backward", "nll_loss2d_backward",
};
// clang-format on

using Table = std::unordered_map<std::string_view, std::string_view>;

const Table& familyTable() {
  static const Table table = [] {
    Table t;
    for (const FamilyEntry& e : kFamilyTable) t.emplace(e.name, e.family);
    for (const char* name : kElementwiseNames) t.emplace(name, "elementwise");
    return t;
  }();
  return table;
}

using text::endsWith;
using text::startsWith;

// "aten::add_.Tensor" -> "add_": drop the namespace and the overload.
std::string_view baseName(std::string_view op_name) {
  size_t ns = op_name.rfind("::");
  if (ns != std::string_view::npos) op_name.remove_prefix(ns + 2);
  size_t dot = op_name.find('.');
  if (dot != std::string_view::npos) op_name = op_name.substr(0, dot);
  return op_name;
}

std::string_view lookup(std::string_view key) {
  const Table& t = familyTable();
  auto it = t.find(key);
  return it == t.end() ? std::string_view{} : it->second;
}

// Tries the name, then successively stripped forms of it. Each step removes
// one decoration PyTorch adds around a base op: in-place '_' suffix, leading
// '_' of internal ops, backend prefixes, backward suffixes.
std::string_view familyOfBase(std::string_view name) {
  static constexpr std::array<std::string_view, 4> kBackendPrefixes = {"cudnn_", "miopen_",
                                                                       "mkldnn_", "fbgemm_"};
  static constexpr std::array<std::string_view, 6> kBackwardSuffixes = {
      "_backward_data",   "_backward_input", "_backward_weight",
      "_backward_reduce", "_backward",       "_forward"};
  for (int step = 0; step < 8 && !name.empty(); ++step) {
    if (std::string_view f = lookup(name); !f.empty()) return f;
    if (endsWith(name, "_")) {
      name.remove_suffix(1);
      continue;
    }
    if (startsWith(name, "_")) {
      name.remove_prefix(1);
      continue;
    }
    bool changed = false;
    for (std::string_view p : kBackendPrefixes) {
      if (startsWith(name, p)) {
        name.remove_prefix(p.size());
        changed = true;
        break;
      }
    }
    for (std::string_view s : kBackwardSuffixes) {
      if (!changed && endsWith(name, s)) {
        name.remove_suffix(s.size());
        changed = true;
        break;
      }
    }
    if (!changed) break;
  }
  // Any remaining multi-tensor optimizer op is a batch of elementwise kernels.
  if (startsWith(name, "foreach_")) return "elementwise";
  return {};
}

}  // namespace

std::string opFamilyOfName(const std::string& op_name) {
  std::string_view base = baseName(op_name);
  if (startsWith(op_name, "c10d::")) return "comm";
  std::string_view family = familyOfBase(base);
  return family.empty() ? std::string("other") : std::string(family);
}

std::string opFamily(const Node& node) {
  switch (node.category) {
    case NodeCategory::kCommunication:
      return "comm";
    case NodeCategory::kTriton:
      return "triton";
    default:
      break;
  }
  if (node.kernel_backend == "triton") return "triton";
  return opFamilyOfName(node.name);
}

}  // namespace tracetwin::core
