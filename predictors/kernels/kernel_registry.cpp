// The two registries of the prediction layer: model kinds (for loading) and
// op families (what each serves and its analytic fallback).
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "core/errors.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/comm/comm_model.h"
#include "predictors/kernels/conv_path_model.h"
#include "predictors/kernels/kernel_model.h"
#include "predictors/kernels/xgb_model.h"

namespace tracetwin::predictors {
namespace {

std::map<std::string, ModelLoader>& kindTable() {
  static std::map<std::string, ModelLoader> table = {
      {"roofline", RooflineModel::fromJson},    {"bandwidth_curve", BandwidthCurveModel::fromJson},
      {"cache_model", CacheModel::fromJson},    {"constant", ConstantModel::fromJson},
      {"alpha_beta", AlphaBetaModel::fromJson}, {"xgboost", XgbResidualModel::fromJson},
      {"conv_path", ConvPathModel::fromJson},
  };
  return table;
}
std::mutex& kindMutex() {
  static std::mutex mu;
  return mu;
}

std::shared_ptr<const KernelModel> roofline(const DeviceSpec& d) {
  auto m = std::make_shared<RooflineModel>();
  m->t0_us = defaultLaunchUs(d);
  return m;
}

std::shared_ptr<const KernelModel> memoryBound(const DeviceSpec& d) {
  return BandwidthCurveModel::fromDevice(d);
}

std::shared_ptr<const KernelModel> cacheModel(const DeviceSpec& d) {
  auto m = std::make_shared<CacheModel>();
  m->t0_us = defaultLaunchUs(d);
  return m;
}

// Views launch no kernel: zero device time on a GPU; on a CPU they cost a
// dispatcher round trip, ~1 us for PyTorch 1.13 on a server core.
std::shared_ptr<const KernelModel> viewModel(const DeviceSpec& d) {
  auto m = std::make_shared<ConstantModel>();
  m->default_us = d.kind == DeviceKind::kGpu ? 0.0 : 1.0;
  return m;
}

std::shared_ptr<const KernelModel> commModel(const DeviceSpec& d) {
  return AlphaBetaModel::fromDevice(d);
}

}  // namespace

void registerModelKind(const std::string& kind, ModelLoader loader) {
  std::lock_guard<std::mutex> lock(kindMutex());
  kindTable()[kind] = std::move(loader);
}

std::shared_ptr<const KernelModel> loadModel(const std::string& kind, const nlohmann::json& params,
                                             const std::string& dir) {
  ModelLoader loader;
  std::string known;
  {
    std::lock_guard<std::mutex> lock(kindMutex());
    auto it = kindTable().find(kind);
    if (it != kindTable().end()) loader = it->second;
    for (const auto& kv : kindTable()) known += (known.empty() ? "" : ", ") + kv.first;
  }
  if (!loader)
    throw InputError(fmt::format("{}: unknown model kind '{}' (known: {})", dir, kind, known));
  return loader(params, dir);
}

const std::vector<FamilyEntry>& familyRegistry() {
  static const std::vector<FamilyEntry> families = {
      {"gemm",
       "dense matrix products; XGBoost on log-time over a roofline",
       {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"},
       roofline},
      {"conv",
       "convolutions fwd/bwd; XGBoost on log-time over a roofline",
       {"aten::convolution", "aten::cudnn_convolution", "aten::convolution_backward"},
       roofline},
      {"embedding_bag",
       "embedding lookups; cache model (LLC-resident rows vs DRAM), XGBoost on top",
       {"aten::embedding_bag", "aten::embedding", "fbgemm::split_embedding_codegen_lookup_*"},
       cacheModel},
      {"elementwise",
       "pointwise ops; roofline with a fitted achieved-bandwidth curve, XGBoost residual over "
       "shapes",
       {"aten::add", "aten::mul", "aten::relu", "aten::fill_"},
       memoryBound},
      {"reduction",
       "reductions and pooling; bandwidth curve, XGBoost residual over shapes",
       {"aten::sum", "aten::mean", "aten::max_pool2d"},
       memoryBound},
      {"norm",
       "normalisations; bandwidth curve, XGBoost residual over rows and row length",
       {"aten::batch_norm", "aten::layer_norm"},
       memoryBound},
      {"softmax",
       "softmax and log-softmax; bandwidth curve, XGBoost residual over shapes",
       {"aten::_softmax", "aten::_log_softmax"},
       memoryBound},
      {"copy",
       "copies, cat, gathers; bandwidth curve, XGBoost residual over shapes",
       {"aten::copy_", "aten::cat", "aten::to"},
       memoryBound},
      {"view",
       "views and metadata; per-op constant, XGBoost residual over shapes",
       {"aten::view", "aten::t", "aten::empty"},
       viewModel},
      {"comm", "collectives; alpha-beta per collective", {"record_param_comms"}, commModel},
      {"triton",
       "Triton kernels; roofline from tensor bytes (always a fallback)",
       {"triton kernels"},
       memoryBound},
      {"other", "anything else; roofline from tensor bytes (always a fallback)", {}, memoryBound},
  };
  return families;
}

const FamilyEntry& familyEntry(const std::string& family) {
  for (const FamilyEntry& e : familyRegistry()) {
    if (e.family == family) return e;
  }
  std::string known;
  for (const FamilyEntry& e : familyRegistry()) known += (known.empty() ? "" : ", ") + e.family;
  throw UsageError(fmt::format("unknown op family '{}' (known: {})", family, known));
}

}  // namespace tracetwin::predictors
