#include "predictors/kernels/feature_shapes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "core/comm/collective_spec.h"
#include "core/errors.h"
#include "core/value.h"
#include "core/zipf_weights.h"
#include "predictors/kernels/features.h"
#include "predictors/kernels/node_args.h"

namespace tracetwin::predictors {
namespace {

struct GemmOperands {
  size_t a, b;
  bool b_transposed;  // linear: weight is [N, K]
};

// Which inputs are the two matrices of each GEMM op (bias comes first in
// addmm/baddbmm). Ops not listed use the first two tensors.
const std::unordered_map<std::string, GemmOperands>& gemmOperands() {
  static const std::unordered_map<std::string, GemmOperands> t = {
      {"mm", {0, 1, false}},    {"bmm", {0, 1, false}},     {"matmul", {0, 1, false}},
      {"addmm", {1, 2, false}}, {"baddbmm", {1, 2, false}}, {"addbmm", {1, 2, false}},
      {"linear", {0, 1, true}}, {"mv", {0, 1, false}},      {"addmv", {1, 2, false}},
      {"dot", {0, 1, false}},
  };
  return t;
}

// A GEMM operand as a stack of matrices: its last two dims (at least 1
// each) and the product of those before them. A 0-dim record is its numel;
// a vector is one row of A or one column of B. Read in place: copies of the
// shapes were two allocations per GEMM of a 100k-op graph.
struct MatrixDims {
  double leading = 1, rows = 1, cols = 1;
};

MatrixDims matrixDims(const core::TensorValue& t, bool vector_is_row) {
  const int64_t* dims = t.shape.empty() ? &t.numel : t.shape.data();
  const size_t n = t.shape.empty() ? 1 : t.shape.size();
  const auto at_least_one = [](int64_t d) { return static_cast<double>(std::max<int64_t>(d, 1)); };
  MatrixDims m;
  if (n == 1) {
    (vector_is_row ? m.cols : m.rows) = at_least_one(dims[0]);
    return m;
  }
  for (size_t i = 0; i + 2 < n; ++i) m.leading *= at_least_one(dims[i]);
  m.rows = at_least_one(dims[n - 2]);
  m.cols = at_least_one(dims[n - 1]);
  return m;
}

}  // namespace

namespace {
// Last two dims stored column-major: stride 1 on rows, not on columns.
bool columnMajor(const core::TensorValue* t) {
  if (t == nullptr || t->strides.size() < 2 || t->strides.size() != t->shape.size()) return false;
  const size_t r = t->strides.size() - 2;
  return t->strides[r] == 1 && t->strides[r + 1] != 1 && t->shape[r] > 1;
}
}  // namespace

GemmShape gemmShape(const core::Node& node) {
  GemmShape s;
  std::string base = baseOpName(node.name);
  while (!base.empty() && base.back() == '_') base.pop_back();
  const core::TensorValue* a = nullptr;
  const core::TensorValue* b = nullptr;
  bool b_t = false;
  if (auto it = gemmOperands().find(base); it != gemmOperands().end()) {
    a = tensorArg(node, "__none__", it->second.a);
    b = tensorArg(node, "__none__", it->second.b);
    b_t = it->second.b_transposed;
  }
  if (!a || !b) {
    auto ts = inputTensors(node);
    if (ts.size() >= 2) {
      a = ts[0];
      b = ts[1];
    } else if (!ts.empty()) {
      a = b = ts[0];
    }
  }
  if (!a) return s;
  const MatrixDims da = matrixDims(*a, true), db = matrixDims(*b, false);
  s.m = da.rows;
  s.k = da.cols;
  if (b_t) {
    s.n = db.rows;
    s.m = da.leading * da.rows;  // linear folds leading dims into M
  } else {
    s.n = db.cols;
    s.batch = std::max(da.leading, db.leading);
  }
  s.a_transposed = columnMajor(a);
  s.b_transposed = b_t != columnMajor(b);
  s.itemsize = a->itemsize > 0 ? a->itemsize : 4;
  s.dtype = a->dtype;
  return s;
}

namespace {

// Forward: a defined `bias` tensor (input 2). Backward: output_mask's third
// entry (grad_bias), the last bool list of convolution_backward.
bool convHasBias(const core::Node& node, bool backward) {
  if (!backward) {
    const core::TensorValue* bias = tensorArg(node, "bias", 2);
    return bias != nullptr && bias->defined();
  }
  const size_t mask_at = argIndex(node, "output_mask", node.inputs.size() - 1);
  if (mask_at >= node.inputs.size()) return false;
  const core::Value& mask = node.inputs[mask_at];
  if (!mask.isList() || mask.elements.size() != 3) return false;
  const core::Value& grad_bias = mask.elements[2];
  return grad_bias.kind == core::ValueKind::kBool && grad_bias.bool_value;
}

}  // namespace

ConvShape convShape(const core::Node& node) {
  ConvShape s;
  std::string base = baseOpName(node.name);
  s.backward = base.find("backward") != std::string::npos;
  // convolution_backward(grad_output, input, weight, ...); forward ops take
  // (input|self, weight, ...).
  const core::TensorValue* in = tensorArg(node, "input", s.backward ? 1 : 0);
  if (!in) in = tensorArg(node, "self", 0);
  const core::TensorValue* wt = tensorArg(node, "weight", s.backward ? 2 : 1);
  if (!in || !wt || in->shape.size() < 3 || wt->shape.size() < 3) return s;
  const auto& x = in->shape;
  const auto& w = wt->shape;
  size_t dims = x.size() - 2;
  // conv_transpose2d, cudnn_convolution_transpose (a GPU trace), and the
  // convolution ops with `transposed` set (the backward of a transposed
  // convolution): the weight is [in, out / groups, ...] and the map grows by
  // the stride.
  s.transposed = base.find("conv_transpose") != std::string::npos ||
                 base.find("convolution_transpose") != std::string::npos ||
                 intArg(node, "transposed", 99, 0) != 0;
  s.n = static_cast<double>(x[0]);
  s.c = static_cast<double>(x[1]);
  s.h = static_cast<double>(x[2]);
  s.w = dims >= 2 ? static_cast<double>(x[3]) : 1.0;
  s.groups = static_cast<double>(std::max<int64_t>(intArg(node, "groups", 99, 1), 1));
  s.k = s.transposed ? static_cast<double>(w[1]) * s.groups : static_cast<double>(w[0]);
  s.filter = product(w, 2);
  s.in_spatial = product(x, 2);
  // Each name looked up once: this runs for every convolution of a graph.
  const size_t stride_at = argIndex(node, "stride", 99);
  const size_t padding_at = argIndex(node, "padding", 99);
  const size_t dilation_at = argIndex(node, "dilation", 99);
  const size_t output_padding_at = s.transposed ? argIndex(node, "output_padding", 99) : 99;
  s.stride = intListElementAt(node, stride_at, 0, 1);
  s.dilation = intListElementAt(node, dilation_at, 0, 1);
  s.out_spatial = 1;
  bool strided = false, dilated = false, one_by_one = true, big_filter = dims >= 1;
  for (size_t d = 0; d < dims; ++d) {
    const int64_t stride = std::max<int64_t>(intListElementAt(node, stride_at, d, 1), 1);
    const int64_t dilation = intListElementAt(node, dilation_at, d, 1);
    const int64_t pad = intListElementAt(node, padding_at, d, 0);
    const int64_t span = dilation * (w[d + 2] - 1);
    const int64_t out = s.transposed ? (x[d + 2] - 1) * stride - 2 * pad + span +
                                           intListElementAt(node, output_padding_at, d, 0) + 1
                                     : (x[d + 2] + 2 * pad - span - 1) / stride + 1;
    s.out_spatial *= static_cast<double>(std::max<int64_t>(out, 1));
    strided |= stride != 1;
    dilated |= dilation != 1;
    one_by_one &= w[d + 2] == 1;
    big_filter &= w[d + 2] > 3;
  }
  const bool onednn = (strided || dilated || s.n >= 16 || !one_by_one) &&
                      (s.groups > 1 || big_filter || s.n > 1 || s.n * s.c * s.in_spatial > 20480);
  // LibTorch 1.13 has no oneDNN transposed convolution on a CPU: every one
  // runs slow_conv_transpose2d/3d (im2col, BLAS, col2im).
  s.cpu_native_path = !onednn || s.transposed;
  s.bias = convHasBias(node, s.backward);
  s.itemsize = in->itemsize > 0 ? in->itemsize : 4;
  s.dtype = in->dtype;
  return s;
}

EmbeddingShape embeddingShape(const core::Node& node) {
  EmbeddingShape s;
  std::string base = baseOpName(node.name);
  s.backward = base.find("backward") != std::string::npos;
  // Weights: the largest floating tensor (fbgemm's table-batched ops pass all
  // tables flattened into one 1-D `dev_weights`); indices and offsets by
  // name, else the two largest integer tensors, the earlier first among
  // equals. One pass: collecting and sorting them was ~6 allocations per op.
  const core::TensorValue* weight = nullptr;
  const core::TensorValue* largest_int = nullptr;
  const core::TensorValue* second_int = nullptr;
  forEachDefinedTensor(node.inputs, [&](const core::TensorValue& t) {
    if (core::isFloatingPoint(t.dtype)) {
      if (!weight || t.numel > weight->numel) weight = &t;
    } else if (!largest_int || t.numel > largest_int->numel) {
      second_int = largest_int;
      largest_int = &t;
    } else if (!second_int || t.numel > second_int->numel) {
      second_int = &t;
    }
  });
  const core::TensorValue* indices = tensorArg(node, "indices", 999);
  const core::TensorValue* offsets = tensorArg(node, "offsets", 999);
  if (!indices) indices = largest_int;
  if (!offsets && second_int != nullptr && second_int != indices) offsets = second_int;
  s.bagged = offsets != nullptr;
  s.sparse = intArg(node, "sparse", 999, 0) != 0;
  double lookups = indices ? static_cast<double>(std::max<int64_t>(indices->numel, 1)) : 1.0;
  // Bags: offsets hold one more entry than bags (tables x batch for fbgemm).
  s.batch = offsets ? std::max<double>(static_cast<double>(offsets->numel) - 1.0, 1.0) : lookups;
  s.pooling = std::max(lookups / s.batch, 1.0);
  // Row width: each bag produces one pooled row, so output elements / bags;
  // backward ops take it from the gradient's last dimension.
  double out_numel = 0;
  forEachDefinedTensor(node.outputs, [&](const core::TensorValue& t) {
    out_numel = std::max(out_numel, static_cast<double>(t.numel));
  });
  if (!s.backward && out_numel > 0) {
    s.dim = std::max(1.0, std::round(out_numel / s.batch));
  } else if (weight && !weight->shape.empty()) {
    s.dim = static_cast<double>(std::max<int64_t>(weight->shape.back(), 1));
  }
  if (weight && weight->shape.size() == 2 && !s.backward)
    s.dim = static_cast<double>(weight->shape[1]);
  s.rows = weight ? std::max(1.0, static_cast<double>(weight->numel) / s.dim) : 1.0;
  int64_t num_weights = intArg(node, "num_weights", 999, -1);
  if (num_weights > 0) s.rows = static_cast<double>(num_weights);
  if (weight) {
    s.itemsize = weight->itemsize > 0 ? weight->itemsize : 4;
    s.dtype = weight->dtype;
  }
  return s;
}

CommShape commShape(const core::Node& node) {
  CommShape s;
  double tensor_bytes = 0;
  for (const core::TensorValue* t : inputTensors(node))
    tensor_bytes = std::max(tensor_bytes, static_cast<double>(t->bytes()));
  for (const core::TensorValue* t : outputTensors(node))
    tensor_bytes = std::max(tensor_bytes, static_cast<double>(t->bytes()));
  s.bytes = tensor_bytes;
  if (!node.comm && node.category == core::NodeCategory::kCommunication) {
    // PyTorch 1.13's c10d ops and bare gloo:/nccl: labels (no
    // record_param_comms): their name says the collective, their split
    // sizes the group (core/comm/collective_spec.h).
    try {
      const core::comm::CollectiveSpec spec = core::comm::readCollective(node);
      s.collective = core::comm::collectiveInfo(spec.kind).name;
      s.world_size = spec.group_size;
      return s;
    } catch (const InputError&) {
      // not a collective it knows: the legacy reading below
    }
  }
  if (node.comm) {
    if (!node.comm->collective_name.empty()) s.collective = node.comm->collective_name;
    s.world_size = node.comm->pg_size;
    double nelems =
        static_cast<double>(std::max(node.comm->in_msg_nelems, node.comm->out_msg_nelems));
    int64_t item = core::commItemsize(node.comm->dtype);
    if (nelems > 0 && item > 0) s.bytes = std::max(s.bytes, nelems * static_cast<double>(item));
    return s;
  }
  // Legacy record_param_comms: the collective name is one of the string inputs.
  static const char* const kNames[] = {"all_reduce",     "allreduce",  "all_gather", "allgather",
                                       "reduce_scatter", "all_to_all", "alltoall",   "broadcast",
                                       "barrier",        "reduce",     "send",       "recv",
                                       "gather",         "scatter"};
  for (const core::Value& v : node.inputs) {
    if (v.kind != core::ValueKind::kString) continue;
    for (const char* n : kNames) {
      if (v.string_value.find(n) != std::string::npos) {
        s.collective = v.string_value;
        return s;
      }
    }
  }
  return s;
}

double flopsPerElement(const std::string& op) {
  // Counted as the arithmetic a straightforward kernel does per output
  // element; transcendental functions count ~4 (exp/log/sigmoid), gelu ~8.
  static const std::unordered_map<std::string_view, double> t = {
      {"exp", 4},
      {"log", 4},
      {"sigmoid", 4},
      {"tanh", 6},
      {"gelu", 8},
      {"silu", 5},
      {"softmax", 5},
      {"log_softmax", 5},
      {"cross_entropy_loss", 6},
      {"layer_norm", 8},
      {"native_layer_norm", 8},
      {"batch_norm", 5},
      {"native_batch_norm", 5},
      {"cudnn_batch_norm", 5},
      {"group_norm", 8},
      {"pow", 4},
      {"sqrt", 2},
      {"rsqrt", 2},
      {"div", 1},
      {"addcdiv", 3},
      {"addcmul", 3},
      {"erf", 4},
  };
  std::string_view base = op;
  if (size_t ns = base.rfind("::"); ns != std::string_view::npos) base.remove_prefix(ns + 2);
  base = base.substr(0, base.find('.'));
  while (!base.empty() && base.back() == '_') base.remove_suffix(1);
  while (!base.empty() && base.front() == '_') base.remove_prefix(1);
  auto it = t.find(base);
  return it == t.end() ? 1.0 : it->second;
}

std::vector<double> poissonReuseHistogram(double lookups, double rows) {
  std::vector<double> hist(kReuseBins, 0.0);
  double lambda = std::max(lookups, 1.0) / std::max(rows, 1.0);
  double p0 = std::exp(-lambda);
  double touched = 1.0 - p0;
  if (touched <= 1e-300) {
    hist[kReuseBins - 1] = 1.0;
    return hist;
  }
  // Bin b covers counts (2^(b-1), 2^b] for b >= 1 and {1} for b = 0. The
  // logs and bins of the counts are the same for every op: a table, so an
  // embedding op pays one exp per count (four transcendentals per count made
  // this 4% of predicting a 100k-op graph).
  struct CountTable {
    double log_k[65];
    int bin[65];
    CountTable() {
      for (int k = 1; k <= 64; ++k) {
        log_k[k] = std::log(static_cast<double>(k));
        const int b = k == 1 ? 0 : static_cast<int>(std::ceil(std::log2(static_cast<double>(k))));
        bin[k] = std::min(b, kReuseBins - 1);
      }
    }
  };
  static const CountTable table;
  const double log_lambda = std::log(lambda);
  double log_pk = -lambda;  // log P(count = 0)
  double assigned = 0.0;
  for (int k = 1; k <= 64; ++k) {
    log_pk += log_lambda - table.log_k[k];
    double pk = std::exp(log_pk) / touched;
    hist[table.bin[k]] += pk;
    assigned += pk;
  }
  hist[kReuseBins - 1] += std::max(0.0, 1.0 - assigned);
  return hist;
}

namespace {

// Rows of a Zipf table as blocks of near-equal per-row weight
// (first + i)^-exponent: each row its own block up to kExactZipfRows, then
// blocks 0.1% wide, each weighted by the integral of the weight over it (the
// midpoint rule for a sum). A table of 10^9 rows is ~10^4 blocks, not 10^9
// calls of pow: one 10^8-row Zipf table held a sweep plan for 11.5 s.
struct RowBlock {
  double weight = 0;  // of all its rows
  double rows = 1;
};

constexpr int64_t kExactZipfRows = int64_t{1} << 16;

// Weights relative to the first row's (core/zipf_weights.h): a shard deep in
// a steep table has every absolute weight below the smallest double.
std::vector<RowBlock> zipfRowBlocks(int64_t rows, double exponent, int64_t first_row) {
  const core::ZipfWeights weights(exponent, first_row);
  std::vector<RowBlock> blocks;
  const int64_t exact = std::min(rows, kExactZipfRows);
  blocks.reserve(size_t(std::max<int64_t>(exact, 0)) + 1024);
  for (int64_t i = 1; i <= exact; ++i) blocks.push_back({weights.term(double(i)), 1});
  for (int64_t a = exact + 1; a <= rows;) {
    const int64_t b = std::min(rows, a + std::max<int64_t>(1, a / 1000) - 1);
    blocks.push_back({weights.integral(double(a) - 0.5, double(b) + 0.5), double(b - a + 1)});
    a = b + 1;
  }
  return blocks;
}

}  // namespace

std::vector<double> zipfReuseHistogram(double lookups, int64_t rows, double exponent,
                                       int64_t first_row) {
  std::vector<double> hist(kReuseBins, 0.0);
  const std::vector<RowBlock> blocks =
      zipfRowBlocks(rows, exponent, std::max<int64_t>(first_row, 0));
  double norm = 0;
  for (const RowBlock& b : blocks) norm += b.weight;
  // Row i's count is Poisson(c_i); given it was touched, count k >= 1 with
  // probability c^k e^-c / k! / (1 - e^-c), spread over the bins as
  // poissonReuseHistogram spreads one lambda. Binning each row at its mean
  // count c / (1 - e^-c), which exceeds 1 for every c > 0, put the long tail
  // of rows looked up once into (1, 2]: none in the first bin, where 80% of
  // the touched rows of 10,240 lookups into 100,000 rows at exponent 1.05
  // belong. The terms fall fast for the tail's small c: a few per row.
  static const auto kBinOfCount = [] {
    std::array<int, 65> bin{};
    for (int k = 1; k <= 64; ++k) {
      const int b = k == 1 ? 0 : int(std::ceil(std::log2(double(k))));
      bin[size_t(k)] = std::min(b, kReuseBins - 1);
    }
    return bin;
  }();
  double touched_total = 0;
  for (const RowBlock& block : blocks) {
    const double c = std::max(lookups, 1.0) * (block.weight / block.rows) / norm;
    const double touched = -std::expm1(-c);
    if (touched <= 0) continue;
    const double rows_touched = touched * block.rows;
    touched_total += rows_touched;
    if (c > 32) {  // mass far from 1: the mean count's bin
      hist[size_t(std::min(int(std::ceil(std::log2(c / touched))), kReuseBins - 1))] +=
          rows_touched;
      continue;
    }
    double pk = c * std::exp(-c) / touched;  // P(count = 1 | touched)
    double cumulative = 0;
    for (int k = 1; k <= 64; ++k) {
      hist[size_t(kBinOfCount[size_t(k)])] += rows_touched * pk;
      cumulative += pk;
      if (cumulative > 1 - 1e-9) break;
      pk *= c / double(k + 1);
    }
    hist[kReuseBins - 1] += rows_touched * std::max(0.0, 1.0 - cumulative);
  }
  if (touched_total <= 0) {
    hist[0] = 1.0;
    hist.push_back(1.0);
    return hist;
  }
  for (double& h : hist) h /= touched_total;
  // The exact unique fraction (features.h, kReuseValuesWithUnique).
  hist.push_back(std::min(1.0, touched_total / std::max(lookups, 1.0)));
  return hist;
}

double uniqueFraction(const std::vector<double>& histogram) {
  if (histogram.size() == size_t(kReuseValuesWithUnique)) return histogram[kReuseBins];
  static const double kMid[kReuseBins] = {1, 2, 3, 6, 12, 24, 48, 96};
  double mean = 0, total = 0;
  for (size_t b = 0; b < histogram.size() && b < kReuseBins; ++b) {
    mean += histogram[b] * kMid[b];
    total += histogram[b];
  }
  if (total <= 0 || mean <= 0) return 1.0;
  return std::min(1.0, total / mean);
}

core::DType halfPrecisionOf(const core::Node& node) {
  core::DType half = core::DType::kUnknown;
  auto look = [&](const std::vector<core::Value>& values) {
    for (const core::Value& v : values) {
      core::forEachTensor(v, [&](const core::TensorValue& t) {
        if (t.dtype == core::DType::kBFloat16 || t.dtype == core::DType::kFloat16) half = t.dtype;
      });
      if (half != core::DType::kUnknown) return;
    }
  };
  look(node.inputs);
  if (half == core::DType::kUnknown) look(node.outputs);
  return half;
}

}  // namespace tracetwin::predictors
