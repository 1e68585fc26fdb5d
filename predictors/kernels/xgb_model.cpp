#include "predictors/kernels/xgb_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/errors.h"
#include "core/input_files.h"
#include "predictors/kernels/xgb_library.h"  // XGBoost 1.6 C API, loaded on first use
#include "predictors/models/json_fields.h"

namespace tracetwin::predictors {
namespace {

// XGBoost's message for the last failed call, without the native stack
// trace it appends (a dozen "[bt] (n) lib(+0x...)" lines under a corrupt
// model file's one-line reason).
std::string xgbLastError() {
  std::string message = xgbApi().XGBGetLastError();
  const size_t trace = message.find("Stack trace:");
  if (trace != std::string::npos) message.erase(trace);
  while (!message.empty() &&
         (message.back() == '\n' || message.back() == ' ' || message.back() == ':')) {
    message.pop_back();
  }
  return message;
}

// One checked call per XGBoost C function; the library's own message is kept.
void xgbCheck(int rc, const char* call, const std::string& context = "") {
  if (rc != 0) {
    throw RuntimeFailure(fmt::format("XGBoost {} failed{}{}: {}", call,
                                     context.empty() ? "" : " for ", context, xgbLastError()));
  }
}
#define XGB_CALL(fn, ...) xgbCheck(xgbApi().fn(__VA_ARGS__), #fn)

class DMatrix {
 public:
  DMatrix(const std::vector<float>& x, size_t cols) {
    size_t rows = cols ? x.size() / cols : 0;
    XGB_CALL(XGDMatrixCreateFromMat, x.data(), rows, cols, std::nanf(""), &h_);
  }
  ~DMatrix() { xgbApi().XGDMatrixFree(h_); }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return h_; }

 private:
  DMatrixHandle h_ = nullptr;
};

}  // namespace

Booster::Booster() { XGB_CALL(XGBoosterCreate, nullptr, 0, &handle_); }
Booster::Booster(std::string deferred_path, size_t n_features)
    : deferred_path_(std::move(deferred_path)), deferred_features_(n_features) {
  core::noteInputFile(deferred_path_, core::InputUse::kModel);  // no report replaces it
}
Booster::~Booster() {
  if (handle_ != nullptr) xgbApi().XGBoosterFree(handle_);
}

std::unique_ptr<Booster> Booster::train(const std::vector<float>& x, size_t cols,
                                        const std::vector<float>& y, const XgbParams& p) {
  DMatrix dtrain(x, cols);
  XGB_CALL(XGDMatrixSetFloatInfo, dtrain.get(), "label", y.data(), y.size());
  auto b = std::make_unique<Booster>();
  xgbApi().XGBoosterFree(b->handle_);
  DMatrixHandle mats[] = {dtrain.get()};
  XGB_CALL(XGBoosterCreate, mats, 1, &b->handle_);
  const std::pair<const char*, std::string> params[] = {
      {"objective", "reg:squarederror"},
      {"max_depth", std::to_string(p.max_depth)},
      {"eta", fmt::format("{}", p.eta)},
      {"seed", std::to_string(p.seed)},
      {"nthread", "1"},  // deterministic, and the build hosts are small
      {"verbosity", "0"},
      {"base_score", "0"},
      {"min_child_weight", "2"},
  };
  for (const auto& [k, v] : params) XGB_CALL(XGBoosterSetParam, b->handle_, k, v.c_str());
  for (int i = 0; i < p.rounds; ++i) XGB_CALL(XGBoosterUpdateOneIter, b->handle_, i, dtrain.get());
  return b;
}

std::unique_ptr<Booster> Booster::loadWhenUsed(const std::string& path, size_t n_features) {
  if (!std::filesystem::exists(path)) throw InputError(fmt::format("{}: model file missing", path));
  return std::unique_ptr<Booster>(new Booster(path, n_features));
}

void* Booster::handleLocked() const {
  if (deferred_path_.empty()) return handle_;
  BoosterHandle h = nullptr;
  XGB_CALL(XGBoosterCreate, nullptr, 0, &h);
  if (xgbApi().XGBoosterLoadModel(h, deferred_path_.c_str()) != 0) {
    const std::string reason = xgbLastError();
    xgbApi().XGBoosterFree(h);
    throw InputError(fmt::format("{}: cannot load XGBoost model: {}", deferred_path_, reason));
  }
  bst_ulong read = 0;
  if (xgbApi().XGBoosterGetNumFeature(h, &read) != 0 || read != deferred_features_) {
    xgbApi().XGBoosterFree(h);
    throw InputError(fmt::format("{}: the trees read {} features, the manifest's n_features is {}",
                                 deferred_path_, read, deferred_features_));
  }
  handle_ = h;
  deferred_path_.clear();
  return handle_;
}

void Booster::save(const std::string& path) const {
  core::refuseOverwritingAnInput(path, "this model file", true);
  std::lock_guard<std::mutex> lock(mu_);
  xgbCheck(xgbApi().XGBoosterSaveModel(handleLocked(), path.c_str()), "XGBoosterSaveModel", path);
  // The same trees in the JSON of sets written before the binary format (a
  // refit in place of such a set): the manifest names the new file now.
  const std::string ubj = kXgbModelExtension;
  if (path.size() > ubj.size() && path.compare(path.size() - ubj.size(), ubj.size(), ubj) == 0) {
    std::error_code ignored;
    std::filesystem::remove(path.substr(0, path.size() - ubj.size()) + ".xgb.json", ignored);
  }
}

std::vector<float> Booster::predict(const std::vector<float>& x, size_t cols) const {
  if (x.empty()) return {};
  DMatrix d(x, cols);
  std::lock_guard<std::mutex> lock(mu_);
  bst_ulong len = 0;
  const float* out = nullptr;
  XGB_CALL(XGBoosterPredict, handleLocked(), d.get(), 0, 0, 0, &len, &out);
  return std::vector<float>(out, out + len);
}

void appendBoosterRow(const OpFeatures& f, size_t n_features, size_t repeated_column,
                      std::vector<float>* rows, size_t reuse_column) {
  for (size_t i = 0; i < n_features; ++i) {
    if (i == repeated_column) {
      rows->push_back(f.repeated ? 1.0F : 0.0F);
    } else if (i == reuse_column) {
      rows->push_back(reuseColumnValue(f));
    } else {
      rows->push_back(i < f.x.size() ? f.x[i] : std::nanf(""));
    }
  }
}

XgbResidualModel::XgbResidualModel(std::shared_ptr<const KernelModel> base,
                                   std::shared_ptr<const Booster> booster, size_t n_features,
                                   size_t repeated_column, SizeEdges edges, size_t reuse_column,
                                   InterleavedReach reach)
    : base_(std::move(base)),
      booster_(std::move(booster)),
      n_features_(n_features),
      repeated_column_(repeated_column),
      edges_(std::move(edges)),
      reuse_column_(reuse_column),
      reach_(std::move(reach)) {}

double XgbResidualModel::predictUs(const OpFeatures& f, const DeviceSpec& d) const {
  std::vector<double> out;
  predictBatch({&f}, d, &out);
  return out[0];
}

void XgbResidualModel::predictBatch(const std::vector<const OpFeatures*>& ops, const DeviceSpec& d,
                                    std::vector<double>* out_us) const {
  std::vector<float> x;
  x.reserve(ops.size() * n_features_);
  std::vector<double> hot_base(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpFeatures& f = *ops[i];
    hot_base[i] = base_->hotUs(f, d);
    appendBoosterRow(f, n_features_, repeated_column_, &x, reuse_column_);
    if (!f.repeated && !reach_.empty() && repeated_column_ < n_features_) {
      const auto it = reach_.find(f.op);  // beyond its reach: as measured, among copies
      if (it == reach_.end() || hot_base[i] > it->second)
        x[i * n_features_ + repeated_column_] = 1.0F;
    }
  }
  std::vector<float> log_ratio = booster_->predict(x, n_features_);
  out_us->resize(ops.size());
  // The trees learned log(measured / base) on cache-hot microbenchmarks:
  // they scale the base's hot time, not the DRAM time of cold inputs. Scaled
  // together, a residual below 1 (a fill that runs fast while its buffer is
  // cached) would take a cold 1.28 MB gradient under what DRAM can deliver
  // (38 GB/s here: 34 us; embbag's zero_ measures 31-38 us).
  for (size_t i = 0; i < ops.size(); ++i) {
    double ratio = static_cast<double>(log_ratio[i]);
    if (!edges_.empty()) {
      auto edge = edges_.find(ops[i]->op);
      if (edge != edges_.end() && ops[i]->bytes > kBeyondEdge * edge->second.max_bytes)
        ratio = edge->second.log_ratio;
    }
    const double hot = hot_base[i] * std::exp(ratio);
    (*out_us)[i] =
        std::max({hot, base_->coldFloorUs(*ops[i], d), base_->computeFloorUs(*ops[i], d)});
  }
}

nlohmann::json XgbResidualModel::save(const std::string& dir, const std::string& stem) const {
  std::string file = stem + kXgbModelExtension;
  booster_->save((std::filesystem::path(dir) / file).string());
  nlohmann::json j = {{"base_kind", base_->kind()},
                      {"base", base_->save(dir, stem + ".base")},
                      {"n_features", n_features_},
                      {"files", {file}}};
  if (repeated_column_ != kNoRepeatedColumn) j["repeated_column"] = repeated_column_;
  if (reuse_column_ != kNoReuseColumn) j["reuse_column"] = reuse_column_;
  if (!edges_.empty()) {
    nlohmann::json edges = nlohmann::json::object();  // sorted by op: stable files
    for (const auto& [op, e] : edges_)
      edges[op] = {{"max_bytes", e.max_bytes}, {"log_ratio", e.log_ratio}};
    j["size_edges"] = std::move(edges);
  }
  if (!reach_.empty()) {
    nlohmann::json reach = nlohmann::json::object();
    for (const auto& [op, us] : reach_) reach[op] = us;
    j["interleaved_reach_us"] = std::move(reach);
  }
  return j;
}

namespace {

// A column of the booster's rows, or `absent` without the key. Read as a
// count: a float of 1e300 read as size_t was undefined behaviour.
size_t optionalColumn(const nlohmann::json& j, const char* key, size_t absent,
                      const std::string& where) {
  if (!j.contains(key)) return absent;
  return static_cast<size_t>(requiredCount(j, key, where));
}

}  // namespace

size_t checkedFeatureCount(int64_t n_features, const std::string& where) {
  // Far above any family's feature vector (a few dozen columns): a bound that
  // keeps a corrupt manifest from sizing gigabytes of rows.
  constexpr int64_t kMaxFeatures = 4096;
  if (n_features < 1 || n_features > kMaxFeatures) {
    throw InputError(fmt::format("{}: n_features {} is not a column count in 1..{}", where,
                                 n_features, kMaxFeatures));
  }
  return static_cast<size_t>(n_features);
}

std::shared_ptr<const KernelModel> XgbResidualModel::fromJson(const nlohmann::json& j,
                                                              const std::string& dir) {
  try {
    std::string file = j.at("files").at(0).get<std::string>();
    auto base = loadModel(j.at("base_kind").get<std::string>(), j.at("base"), dir);
    const std::string where = dir + ": xgboost model";
    const size_t n_features = checkedFeatureCount(requiredCount(j, "n_features", where), where);
    std::shared_ptr<const Booster> booster =
        Booster::loadWhenUsed((std::filesystem::path(dir) / file).string(), n_features);
    const size_t repeated_column = optionalColumn(j, "repeated_column", kNoRepeatedColumn, where);
    if (repeated_column != kNoRepeatedColumn && repeated_column >= n_features) {
      throw InputError(
          fmt::format("{}: xgboost model: repeated_column {} is not below n_features {}", dir,
                      repeated_column, n_features));
    }
    const size_t reuse_column = optionalColumn(j, "reuse_column", kNoReuseColumn, where);
    if (reuse_column != kNoReuseColumn &&
        (reuse_column >= n_features || reuse_column == repeated_column)) {
      throw InputError(
          fmt::format("{}: xgboost model: reuse_column {} is not below n_features {} or is the "
                      "repeated column",
                      dir, reuse_column, n_features));
    }
    SizeEdges edges;
    if (j.contains("size_edges")) {
      for (const auto& [op, e] : j.at("size_edges").items())
        edges[op] = {e.at("max_bytes").get<double>(), e.at("log_ratio").get<double>()};
    }
    InterleavedReach reach;
    if (j.contains("interleaved_reach_us")) {
      for (const auto& [op, us] : j.at("interleaved_reach_us").items())
        reach[op] = us.get<double>();
    }
    return std::make_shared<XgbResidualModel>(base, booster, n_features, repeated_column,
                                              std::move(edges), reuse_column, std::move(reach));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: xgboost model entry malformed: {}", dir, e.what()));
  }
}

const KernelModel* analyticBase(const KernelModel* model) {
  if (const auto* learned = dynamic_cast<const XgbResidualModel*>(model)) return &learned->base();
  return model;
}

}  // namespace tracetwin::predictors
