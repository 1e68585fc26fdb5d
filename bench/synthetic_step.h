// The synthetic training step the prediction benchmarks time: a 100,000-op
// ResNet / DLRM-like op mix on one thread, and models fitted on 2,000 ops of
// the same mix (XGBoost for GEMM, conv and embedding). Shared by
// bench_predict and bench_multirank.
#pragma once

#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "core/graph.h"
#include "predictors/kernels/features.h"
#include "predictors/models/model_set.h"
#include "predictors/models/training.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::bench {

inline constexpr int kOps = 100000;

inline double cpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline core::Value tensor(std::vector<int64_t> shape, core::DType dtype = core::DType::kFloat32) {
  static int64_t next = 10;
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = dtype == core::DType::kInt64 ? "Tensor(long)" : "Tensor(float)";
  v.tensor->tensor_id = v.tensor->storage_id = ++next;
  v.tensor->dtype = dtype;
  v.tensor->itemsize = dtype == core::DType::kInt64 ? 8 : 4;
  v.tensor->numel = 1;
  for (int64_t d : shape) v.tensor->numel *= d;
  v.tensor->shape = std::move(shape);
  v.tensor->device = "cuda:0";
  return v;
}

inline core::Value ints(std::vector<int64_t> xs) {
  core::Value v;
  v.kind = core::ValueKind::kList;
  v.type = "GenericList[Int]";
  for (int64_t x : xs) {
    core::Value e;
    e.kind = core::ValueKind::kInt;
    e.type = "Int";
    e.int_value = x;
    v.elements.push_back(e);
  }
  return v;
}

inline core::Node op(const char* name, const char* schema, std::vector<core::Value> in,
              std::vector<core::Value> out) {
  core::Node n;
  n.name = name;
  n.op_schema_text = schema;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.tid = 1;
  return n;
}

// One op of a training step; `i` varies the sizes.
inline core::Node makeOp(int i, std::mt19937_64& rng) {
  int64_t b = int64_t{8} << (rng() % 4), c = int64_t{32} << (rng() % 5),
          hw = int64_t{7} << (rng() % 4);
  int64_t m = int64_t{64} << (rng() % 6), k = int64_t{64} << (rng() % 6),
          n = int64_t{64} << (rng() % 6);
  switch (i % 20) {
    case 0:
    case 1:
    case 2:
      return op(
          "aten::convolution",
          "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] "
          "padding, "
          "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
          {tensor({b, c, hw, hw}), tensor({c, c, 3, 3}), tensor({c}), ints({1, 1}), ints({1, 1}),
           ints({1, 1}), ints({0}), ints({0, 0}), ints({1})},
          {tensor({b, c, hw, hw})});
    case 3:
    case 4:
      return op("aten::cudnn_batch_norm",
                "aten::cudnn_batch_norm(Tensor input, Tensor weight) -> Tensor",
                {tensor({b, c, hw, hw}), tensor({c})}, {tensor({b, c, hw, hw})});
    case 5:
    case 6:
    case 7:
      return op("aten::relu_", "aten::relu_(Tensor(a!) self) -> Tensor(a!)",
                {tensor({b, c, hw, hw})}, {tensor({b, c, hw, hw})});
    case 8:
    case 9:
    case 10:
    case 11:
      return op("aten::view", "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
                {tensor({b, c, hw, hw}), ints({-1})}, {tensor({b * c * hw * hw})});
    case 12:
    case 13:
      return op("aten::addmm", "aten::addmm(Tensor self, Tensor mat1, Tensor mat2) -> Tensor",
                {tensor({n}), tensor({m, k}), tensor({k, n})}, {tensor({m, n})});
    case 14:
      return op("aten::embedding_bag",
                "aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets) -> Tensor",
                {tensor({1 << 20, 64}), tensor({b * 20}, core::DType::kInt64),
                 tensor({b + 1}, core::DType::kInt64)},
                {tensor({b, 64})});
    case 15:
      return op("aten::cat", "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
                {tensor({b, c}), tensor({b, c})}, {tensor({2 * b, c})});
    case 16:
      return op("aten::sum", "aten::sum(Tensor self) -> Tensor", {tensor({b, c, hw, hw})},
                {tensor({1})});
    case 17:
      return op("aten::_softmax",
                "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                {tensor({m, n})}, {tensor({m, n})});
    case 18:
      return op("aten::copy_", "aten::copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)",
                {tensor({m, k}), tensor({m, k})}, {tensor({m, k})});
    default:
      return op("aten::add_", "aten::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                {tensor({b, c, hw, hw}), tensor({b, c, hw, hw})}, {tensor({b, c, hw, hw})});
  }
}

// `extra(i, &graph, &next_id)` may add nodes after op i (collectives).
template <typename Extra>
core::Graph makeGraph(Extra extra) {
  core::Graph graph;
  core::Node root;
  root.id = 1;
  root.parent = 1;
  root.name = "[pytorch|profiler|execution_trace|process]";
  core::Node thread;
  thread.id = 2;
  thread.parent = 1;
  thread.name = "[pytorch|profiler|execution_trace|thread]";
  graph.addNode(root);
  graph.addNode(thread);
  std::mt19937_64 rng(1);
  core::NodeId next = 3;
  for (int i = 0; i < kOps; ++i) {
    core::Node n = makeOp(i, rng);
    n.id = next++;
    n.parent = 2;
    graph.addNode(std::move(n));
    extra(i, &graph, &next);
  }
  graph.finalize();
  return graph;
}

// Models fitted on 2,000 ops of the same mix with times from a roofline plus
// noise: XGBoost for GEMM, conv and embedding, bandwidth curves elsewhere,
// with XGBoost residuals where the inner split keeps them (as calibrate does).
// Owned by main(): XGBoost boosters must be freed before the library's own
// statics are destroyed at exit, so no static ModelSet.
// `spaced`: each memory-bound sample also measured 64 MiB of other traffic
// after its inputs' last touch, at twice the time (calibration's spaced
// units): those families' trees read the reuse distance, and the prediction
// walks the iteration for it (the bundled CPU models do since session 23).
inline predictors::ModelSet makeModels(bool spaced = false) {
  {
    predictors::DeviceSpec d;
    d.name = "bench-gpu";
    d.peak_flops = {{"float32", 60e12}};
    d.memory_bandwidth = 3000e9;
    d.compute_units = 132;
    d.clock_hz = 1.98e9;
    std::mt19937_64 rng(2);
    std::lognormal_distribution<double> noise(0, 0.05);
    std::vector<predictors::MeasuredOp> samples;
    for (int i = 0; i < 2000; ++i) {
      core::Node n = makeOp(i, rng);
      predictors::OpFeatures f = predictors::computeFeatures(n);
      double t = 3 + std::max(f.flops / 40e12, f.bytes / 2500e9) * 1e6;
      samples.push_back({n, t * noise(rng), d.name, {}});
      if (spaced && f.family != "gemm" && f.family != "conv" && f.family != "embedding_bag") {
        predictors::MeasuredOp far = samples.back();
        far.spaced = true;
        far.reuse_bytes = 64.0 * (1 << 20);
        far.measured_us *= 2;
        samples.push_back(std::move(far));
      }
    }
    predictors::ModelSet out;
    predictors::FitOptions opts;
    opts.xgb_rounds = 200;
    predictors::fitModels(samples, d, opts, &out);
    // Kernels per op as a GPU calibration fits them (launch_counts.h): a
    // count that grows with the batch for convolutions and GEMMs.
    std::vector<predictors::LaunchSample> launches;
    for (const predictors::MeasuredOp& m : samples) {
      predictors::OpFeatures f = predictors::computeFeatures(m.node);
      const bool counted = f.family == "conv" || f.family == "gemm";
      const int kernels = counted && !f.x.empty() && f.x[0] > 4 ? 3 : 1;
      launches.push_back({std::move(f), kernels});
    }
    out.launch_counts = predictors::LaunchCountModel::fit(
        launches, predictors::LaunchCountModel::treeParams(opts.seed));
    return out;
  }
}

inline core::Graph makeGraph() {
  return makeGraph([](int, core::Graph*, core::NodeId*) {});
}

}  // namespace tracetwin::bench
