// Feature extraction, one function per family in a name-keyed table.
#include "predictors/kernels/features.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>

#include "core/op_family.h"
#include "predictors/kernels/feature_shapes.h"
#include "predictors/kernels/node_args.h"

namespace tracetwin::predictors {
namespace {

float lg(double v) { return static_cast<float>(std::log2(std::max(v, 1.0))); }

// Bytes an op writes in place without returning them: the trace records no
// output for `_foreach_mul_(Tensor(a!)[] self, Scalar) -> ()`, yet its
// kernel writes `self` back. Without them, an optimizer's in-place foreach
// ops were predicted at 0.5-0.6x their Kineto times on an H100 (Adam's
// mul_ and div_ read a list and write it: twice the bytes counted).
double unreturnedWrites(const core::Node& node) {
  if (!node.outputs.empty() || node.schema == nullptr) return 0;
  const std::vector<core::SchemaArgument>& args = node.schema->arguments;
  double bytes = 0;
  for (size_t i = 0; i < args.size() && i < node.inputs.size(); ++i) {
    if (!args[i].is_mutable) continue;
    core::forEachTensor(node.inputs[i], [&](const core::TensorValue& t) {
      if (t.defined()) bytes += static_cast<double>(t.bytes());
    });
  }
  return bytes;
}

void addTensorBytes(const core::Node& node, OpFeatures* f) {
  double bytes = 0;
  auto add = [&](const core::TensorValue& t) { bytes += static_cast<double>(t.bytes()); };
  forEachDefinedTensor(node.inputs, add);
  forEachDefinedTensor(node.outputs, add);
  f->bytes = bytes + unreturnedWrites(node);
}

core::DType mainDtype(const core::Node& node) {
  core::DType best = core::DType::kUnknown;
  int64_t best_numel = -1;
  forEachDefinedTensor(node.inputs, [&](const core::TensorValue& t) {
    if (t.numel > best_numel) {
      best = t.dtype;
      best_numel = t.numel;
    }
  });
  return best;
}

void gemmFeatures(const core::Node& node, OpFeatures* f) {
  GemmShape s = gemmShape(node);
  f->dtype = s.dtype;
  double item = std::max<double>(s.itemsize, 1.0);
  f->flops = 2.0 * s.batch * s.m * s.n * s.k;
  f->bytes = s.batch * (s.m * s.k + s.k * s.n + s.m * s.n) * item;
  f->x = {lg(s.m),
          lg(s.n),
          lg(s.k),
          lg(s.batch),
          static_cast<float>(item),
          lg(f->flops),
          static_cast<float>(std::log2(std::max(f->flops / std::max(f->bytes, 1.0), 1e-3))),
          s.a_transposed ? 1.0f : 0.0f,
          s.b_transposed ? 1.0f : 0.0f};
}

void convFeatures(const core::Node& node, OpFeatures* f) {
  ConvShape s = convShape(node);
  f->dtype = s.dtype;
  double item = std::max<double>(s.itemsize, 1.0);
  double out_elems = s.n * s.k * s.out_spatial;
  const double weight_elems = s.k * (s.c / s.groups) * s.filter;
  f->weight_bytes = weight_elems * item;
  // A transposed convolution multiplies every input pixel (not every output
  // pixel) by the filter: counted per output it would grow with stride^2.
  const double macs = s.transposed ? s.n * s.in_spatial * s.c * (s.k / s.groups) * s.filter
                                   : out_elems * (s.c / s.groups) * s.filter;
  f->flops = 2.0 * macs * (s.backward ? 2.0 : 1.0);
  f->bytes =
      (s.n * s.c * s.in_spatial + weight_elems + out_elems) * item * (s.backward ? 2.0 : 1.0);
  f->x = {
      lg(s.n),
      lg(s.c),
      lg(s.h),
      lg(s.w),
      lg(s.k),
      lg(s.filter),
      static_cast<float>(s.stride),
      static_cast<float>(s.dilation),
      lg(s.groups),
      static_cast<float>(item),
      s.backward ? 1.0f : 0.0f,
      lg(f->flops),
      s.cpu_native_path ? 1.0f : 0.0f,
      // The convolution as the GEMM it lowers to: N = batch x output
      // pixels, K = input channels per group x filter taps, the weight's
      // bytes, and the arithmetic intensity. A layer's speed follows the
      // GEMM's shape (a skinny N streams the weight; LibTorch's native
      // path runs [512 x 4608] x [4608 x 9] at ~5 GFLOP/s), which n, h,
      // w, c and k tie to it only through products the trees cannot form:
      // without these, ResNet-18 at 96 px and batch 1 was predicted at
      // +18% (its 3x3-map layers at +50-70%), within 10% with them.
      // A transposed one: [N x input pixels, C / groups] times the
      // weight, then scattered back (col2im).
      lg(s.n * (s.transposed ? s.in_spatial : s.out_spatial)),
      lg(s.c / s.groups * (s.transposed ? 1.0 : s.filter)),
      lg(f->weight_bytes),
      static_cast<float>(std::log2(std::max(f->flops / std::max(f->bytes, 1.0), 1e-3))),
      // Appended last: boosters saved with the first 17 (18) columns still
      // load.
      s.transposed ? 1.0f : 0.0f,
      s.bias ? 1.0f : 0.0f,
  };
}

void embeddingFeatures(const core::Node& node, const std::vector<double>* reuse, OpFeatures* f) {
  EmbeddingShape s = embeddingShape(node);
  f->dtype = s.dtype;
  double item = std::max<double>(s.itemsize, 1.0);
  std::vector<double> hist =
      (reuse && (reuse->size() == kReuseBins || reuse->size() == kReuseValuesWithUnique))
          ? *reuse
          : poissonReuseHistogram(s.batch * s.pooling, s.rows);
  f->unique_fraction = uniqueFraction(hist);
  hist.resize(kReuseBins);  // the bins are columns; the unique fraction has its own
  f->table_bytes = s.rows * s.dim * item;
  f->gathered_bytes = s.batch * s.pooling * s.dim * item;
  f->flops = s.batch * s.pooling * s.dim;  // one add per gathered element (pooling)
  f->bytes = f->gathered_bytes * (s.backward ? 2.0 : 1.0) + s.batch * s.dim * item +
             s.batch * s.pooling * 8.0;  // + output + int64 indices
  if (s.backward) {
    // A dense weight gradient is zero-filled and written whole: rows x dim,
    // whatever the lookups (DLRM's 20000 x 16 table: 1.28 MB per step).
    double grad_bytes = 0;
    forEachDefinedTensor(node.outputs, [&](const core::TensorValue& t) {
      grad_bytes = std::max(grad_bytes, static_cast<double>(t.bytes()));
    });
    f->bytes += grad_bytes;
  }
  f->x = {lg(s.batch),
          lg(s.rows),
          lg(s.pooling),
          lg(s.dim),
          static_cast<float>(item),
          s.backward ? 1.0f : 0.0f,
          static_cast<float>(f->unique_fraction)};
  for (double h : hist) f->x.push_back(static_cast<float>(h));
  // Appended last, so boosters saved with the first 15 columns still load.
  f->x.push_back(s.bagged ? 1.0f : 0.0f);
  // sparse=True (forward and backward), after it for the same reason: a
  // booster saved with 16 columns reads its repeated column here instead.
  f->x.push_back(s.sparse ? 1.0f : 0.0f);
}

bool contiguous(const core::TensorValue& t) {
  if (t.strides.empty() || t.strides.size() != t.shape.size()) return true;  // not recorded
  int64_t expect = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

// See OpFeatures::variant. Inputs only: outputs are allocated by the op.
std::string memoryVariant(const core::Node& node, std::string_view op) {
  bool zero_dim = false, mixed = false, strided = false;
  core::DType first = core::DType::kUnknown;
  double widest = 0;
  forEachDefinedTensor(node.inputs, [&](const core::TensorValue& t) {
    widest = std::max(widest, static_cast<double>(t.numel));
  });
  forEachDefinedTensor(node.inputs, [&](const core::TensorValue& t) {
    zero_dim |= t.shape.empty() && widest > 0;
    if (first == core::DType::kUnknown) first = t.dtype;
    mixed |= t.dtype != first && t.dtype != core::DType::kUnknown;
    strided |= !contiguous(t);
  });
  std::string v;
  // dropout(input, p, train) with p = 0 or train = false returns its input.
  if ((op == "aten::dropout" || op == "aten::feature_dropout") && node.inputs.size() >= 3) {
    const core::Value& p = node.inputs[1];
    const core::Value& train = node.inputs[2];
    const bool p_zero = (p.kind == core::ValueKind::kDouble && p.double_value == 0.0) ||
                        (p.kind == core::ValueKind::kInt && p.int_value == 0);
    const bool eval = train.kind == core::ValueKind::kBool && !train.bool_value;
    if (p_zero || eval) v += "#off";
  }
  if (zero_dim) v += "#0d";
  if (mixed) v += "#mix";
  if (strided) v += "#nc";
  return v.empty() ? v : std::string(op) + v;
}

void memoryFeatures(const core::Node& node, OpFeatures* f) {
  f->variant = memoryVariant(node, f->op);
  f->dtype = mainDtype(node);
  addTensorBytes(node, f);
  double elems = 0;
  auto widest = [&](const core::TensorValue& t) {
    elems = std::max(elems, static_cast<double>(t.numel));
  };
  forEachDefinedTensor(node.inputs, widest);
  forEachDefinedTensor(node.outputs, widest);
  // Per name, once: the table lookup hashes the op's base name (the op is
  // interned, so its text's address names it for the life of the process).
  thread_local std::unordered_map<const std::string*, double> per_element;
  auto [it, fresh] = per_element.try_emplace(&f->op.str(), 0.0);
  if (fresh) it->second = flopsPerElement(f->op);
  f->flops = it->second * elems;
  f->x = {lg(f->bytes), lg(elems)};
}

// Normalisations loop over rows (batch norm: N x C planes; layer norm: the
// tokens) and vectorise along each row. LibTorch 1.13's CPU batch-norm
// backward pays ~100-200 ns per row when the row is short and not a multiple
// of the vector width: [4, 576, 2, 2] took 250 us against 35 us for
// [4, 576, 4, 4], which a bytes-only curve cannot tell apart. The row count,
// row length and that alignment go to the XGBoost residual.
void normFeatures(const core::Node& node, OpFeatures* f) {
  f->x.reserve(8);
  memoryFeatures(node, f);
  const core::TensorValue* x = tensorArg(node, "input", 0);
  if (x == nullptr) x = tensorArg(node, "grad_out", 0);
  double rows = 1, inner = 1;
  const bool layer_norm = f->op.find("layer_norm") != std::string::npos;
  if (x != nullptr && !x->shape.empty()) {
    const double numel = product(x->shape);
    if (layer_norm) {
      const std::vector<int64_t> normalized = intListArg(node, "normalized_shape", 1, {});
      inner = normalized.empty() ? static_cast<double>(x->shape.back()) : product(normalized);
      rows = inner > 0 ? numel / inner : 0;
    } else {
      rows = product(x->shape, 0, std::min<size_t>(2, x->shape.size()));
      inner = x->shape.size() > 2 ? product(x->shape, 2) : 1;
    }
  }
  const bool backward = f->op.find("backward") != std::string::npos;
  const auto aligned = static_cast<int64_t>(inner) % 8 == 0;
  f->x.push_back(lg(rows));
  f->x.push_back(lg(inner));
  f->x.push_back(aligned ? 1.0F : 0.0F);
  f->x.push_back((layer_norm ? 2.0F : 0.0F) + (backward ? 1.0F : 0.0F));
  // How many statistics the op keeps and how many elements feed each: a
  // batch norm reduces over N x H x W per channel, a layer norm over each
  // row. rows = N x C hides that split, and a GPU parallelises over the
  // statistics: on an H100 [128, 16, 56, 56] took 204 us forward and
  // [32, 64, 56, 56] 54 us, with the same rows and plane. Appended last, so
  // boosters fitted on the first 6 columns still load.
  double statistics = rows, per_statistic = inner;
  if (!layer_norm && x != nullptr && x->shape.size() >= 2) {
    statistics = static_cast<double>(x->shape[1]);
    per_statistic = statistics > 0 ? product(x->shape) / statistics : 0;
  }
  f->x.push_back(lg(statistics));
  f->x.push_back(lg(per_statistic));
}

// A stable number in [0, 1) for an op name, so that the trees of a residual
// can single out an op (max_pool2d's backward is not bandwidth bound) without
// a one-hot column per op.
float opCode(const std::string& op) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : op) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return static_cast<float>(static_cast<double>(h >> 40) * 0x1.0p-24);
}

// What a bytes-only curve cannot see in memory-bound ops (elementwise,
// reductions, softmax, copies, views): how many outputs the op writes against
// how many elements it reads (sum over a dim of 2048 vs over a dim of 2; a
// pooling window), a broadcast operand (an SE block's [N, C, 1, 1] scale),
// the length and position of the dim it works along (softmax over 10 classes
// vs 4096 tokens), the innermost extent (short rows vectorise badly), operand
// count (cat of 2 vs 20), strided operands and the item size. Appended after
// memoryFeatures' two columns.
void shapeFeatures(const core::Node& node, OpFeatures* f) {
  const core::TensorValue* in = nullptr;  // the largest input
  const core::TensorValue* out = nullptr;
  double inputs = 0;
  // The smallest input that is not a scalar: below the output's size it is
  // broadcast (a zero stride, no contiguous inner loop).
  double smallest = 0;
  forEachDefinedTensor(node.inputs, [&](const core::TensorValue& t) {
    inputs += 1;
    if (in == nullptr || t.numel > in->numel) in = &t;
    if (!t.shape.empty() && (smallest == 0 || static_cast<double>(t.numel) < smallest))
      smallest = static_cast<double>(std::max<int64_t>(t.numel, 1));
  });
  forEachDefinedTensor(node.outputs, [&](const core::TensorValue& t) {
    if (out == nullptr || t.numel > out->numel) out = &t;
  });
  const double in_numel = in ? static_cast<double>(std::max<int64_t>(in->numel, 1)) : 1.0;
  const double out_numel = out ? static_cast<double>(std::max<int64_t>(out->numel, 1)) : 1.0;
  const double inner = in && !in->shape.empty() ? static_cast<double>(in->shape.back()) : 1.0;
  const size_t rank = in ? in->shape.size() : 0;
  // The dim an op works along (softmax, sum.dim_IntList, cat): its length
  // and whether it is the innermost one.
  double dim_len = 0;
  float dim_last = 0;
  int64_t dim = intArg(node, "dim", SIZE_MAX, INT64_MIN);
  if (in != nullptr && rank > 0 && dim != INT64_MIN) {
    if (dim < 0) dim += static_cast<int64_t>(rank);
    if (dim >= 0 && dim < static_cast<int64_t>(rank)) {
      dim_len = static_cast<double>(in->shape[static_cast<size_t>(dim)]);
      dim_last = dim == static_cast<int64_t>(rank) - 1 ? 1.0F : 0.0F;
    }
  }
  // Pooling window over the spatial dims (a bare int applies to each).
  double window = 1;
  if (f->op.find("pool") != std::string::npos) {
    const size_t arg = argIndex(node, "kernel_size", SIZE_MAX);
    for (size_t d = 0; d + 2 < std::max<size_t>(rank, 3); ++d) {
      window *=
          static_cast<double>(std::max<int64_t>(intListElement(node, "kernel_size", arg, d, 1), 1));
    }
  }
  f->x.push_back(static_cast<float>(std::log2(in_numel / out_numel)));
  f->x.push_back(lg(out_numel));
  f->x.push_back(smallest > 0 ? lg(out_numel / smallest) : 0.0F);
  f->x.push_back(lg(inner));
  f->x.push_back(lg(dim_len));
  f->x.push_back(dim_last);
  f->x.push_back(static_cast<float>(rank));
  f->x.push_back(lg(window));
  f->x.push_back(lg(inputs));
  f->x.push_back(f->variant.find("#nc") != std::string::npos ? 1.0F : 0.0F);
  f->x.push_back(static_cast<float>(core::dtypeItemsize(f->dtype)));
  f->x.push_back(opCode(f->op));
}

void shapedMemoryFeatures(const core::Node& node, OpFeatures* f) {
  f->x.reserve(14);  // one allocation, not four growing steps, for every op of a graph
  memoryFeatures(node, f);
  shapeFeatures(node, f);
}

void commFeatures(const core::Node& node, OpFeatures* f) {
  CommShape s = commShape(node);
  f->collective = s.collective;
  f->world_size = s.world_size;
  f->message_bytes = s.bytes;
  f->bytes = s.bytes;
  f->dtype = mainDtype(node);
}

// An Inductor kernel (kernel_backend "triton") fuses pointwise ops, or a
// reduction and the pointwise ops around it, into one pass over memory: its
// traffic is the bytes of the tensors it is handed, read or written once
// each (the trace lists outputs among the inputs; an in_out buffer, read and
// written, counts once). One FLOP per element of the largest of them.
void fusedKernelFeatures(const core::Node& node, OpFeatures* f) {
  f->dtype = mainDtype(node);
  addTensorBytes(node, f);
  double elems = 0;
  forEachDefinedTensor(node.inputs, [&](const core::TensorValue& t) {
    elems = std::max(elems, static_cast<double>(t.numel));
  });
  f->flops = elems;
  f->x = {lg(f->bytes), lg(elems)};
}

void otherFeatures(const core::Node& node, OpFeatures* f) {
  f->dtype = mainDtype(node);
  addTensorBytes(node, f);
  f->x = {lg(f->bytes)};
}

using Extractor = std::function<void(const core::Node&, const std::vector<double>*, OpFeatures*)>;

const std::unordered_map<std::string, Extractor>& extractors() {
  static const std::unordered_map<std::string, Extractor> table = {
      {"gemm",
       [](const core::Node& n, const std::vector<double>*, OpFeatures* f) { gemmFeatures(n, f); }},
      {"conv",
       [](const core::Node& n, const std::vector<double>*, OpFeatures* f) { convFeatures(n, f); }},
      {"embedding_bag", embeddingFeatures},
      {"elementwise", [](const core::Node& n, const std::vector<double>*,
                         OpFeatures* f) { shapedMemoryFeatures(n, f); }},
      {"reduction", [](const core::Node& n, const std::vector<double>*,
                       OpFeatures* f) { shapedMemoryFeatures(n, f); }},
      {"norm",
       [](const core::Node& n, const std::vector<double>*, OpFeatures* f) { normFeatures(n, f); }},
      {"softmax", [](const core::Node& n, const std::vector<double>*,
                     OpFeatures* f) { shapedMemoryFeatures(n, f); }},
      {"copy", [](const core::Node& n, const std::vector<double>*,
                  OpFeatures* f) { shapedMemoryFeatures(n, f); }},
      {"view", [](const core::Node& n, const std::vector<double>*,
                  OpFeatures* f) { shapedMemoryFeatures(n, f); }},
      {"comm",
       [](const core::Node& n, const std::vector<double>*, OpFeatures* f) { commFeatures(n, f); }},
      {"triton", [](const core::Node& n, const std::vector<double>*,
                    OpFeatures* f) { fusedKernelFeatures(n, f); }},
  };
  return table;
}

}  // namespace

float reuseColumnValue(const OpFeatures& f) {
  if (f.reuse_bytes < 0) return std::nanf("");
  const double octaves = std::log2(1.0 + f.reuse_bytes / double(1 << 20));
  return static_cast<float>(std::round(octaves * 4) / 4);
}

bool sameReuseColumn(const OpFeatures& a, const OpFeatures& b) {
  if (a.reuse_bytes < 0 || b.reuse_bytes < 0) return (a.reuse_bytes < 0) == (b.reuse_bytes < 0);
  return reuseColumnValue(a) == reuseColumnValue(b);
}

size_t featureCount(const std::string& family) {
  if (family == "gemm") return 9;
  if (family == "conv") return 19;
  if (family == "embedding_bag") return 7 + kReuseBins + 2;
  if (family == "norm") return 8;  // memoryFeatures' 2 + normFeatures' 6
  if (family == "elementwise" || family == "reduction" || family == "softmax" || family == "copy" ||
      family == "view")
    return 14;  // memoryFeatures' 2 + shapeFeatures' 12
  return 0;
}

namespace {

// What depends on the op name only, computed once per distinct name.
struct NameInfo {
  core::InternedText op;  // copied into every op's features: a pointer copy
  core::InternedText family;
  const Extractor* extract = nullptr;
  // An elementwise or copy op, which may have returned an input as it was.
  bool may_pass_input = false;
};

bool mayPassInput(std::string_view family) { return family == "elementwise" || family == "copy"; }

const NameInfo& nameInfo(const core::Node& node) {
  // Per-thread cache: traces repeat a few hundred names over 100k ops.
  // Keyed by the name's interned text, which lives as long as the process
  // (core/interned_text.h), and the category (under 16 kinds).
  thread_local std::unordered_map<uint64_t, NameInfo> cache;
  const uint64_t key =
      (reinterpret_cast<uintptr_t>(&node.name.str()) << 4) | static_cast<uint64_t>(node.category);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  NameInfo info;
  size_t ns = node.name.rfind("::");
  info.op =
      ns == std::string::npos ? node.name.str() : node.name.substr(0, ns + 2) + baseOpName(node.name);
  info.family = core::opFamily(node);
  auto ex = extractors().find(info.family);
  info.extract = ex == extractors().end() ? nullptr : &ex->second;
  info.may_pass_input = mayPassInput(info.family);
  return cache.emplace(key, std::move(info)).first->second;
}

}  // namespace

OpFeatures computeFeatures(const core::Node& node, const std::vector<double>* index_reuse) {
  OpFeatures f;
  // kernel_backend decides the family of Triton nodes whatever their name.
  NameInfo triton;
  const NameInfo* info = &triton;
  if (node.kernel_backend.empty()) {
    info = &nameInfo(node);
  } else {
    std::string family = core::opFamily(node);
    const Extractor* extract = family == "triton" ? &extractors().at("triton") : nullptr;
    const bool may_pass_input = mayPassInput(family);
    triton = {node.name, std::move(family), extract, may_pass_input};
  }
  // A memory-bound op that did no work costs what a view does.
  NameInfo passed;
  if (info->may_pass_input && returnsAnInputAsItWas(node)) {
    static const core::InternedText kView("view");  // interned once, not per op
    passed = {info->op, kView, &extractors().at("view")};
    info = &passed;
  }
  f.op = info->op;
  f.family = info->family;
  f.precision = halfPrecisionOf(node);
  if (info->extract) {
    (*info->extract)(node, index_reuse, &f);
  } else {
    otherFeatures(node, &f);
  }
  if (!std::isfinite(f.flops) || f.flops < 0) f.flops = 0;
  if (!std::isfinite(f.bytes) || f.bytes < 0) f.bytes = 0;
  return f;
}

}  // namespace tracetwin::predictors
