// A learned correction on top of an analytic model: XGBoost regresses
// log(measured / analytic) from the family's features, so predictions keep
// the analytic trend outside the training range (trees cannot extrapolate)
// while fitting the measured shape inside it:
//   t = analytic(f) * exp(booster(f.x))
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "predictors/kernels/kernel_model.h"

namespace tracetwin::predictors {

struct XgbParams {
  int rounds = 300;
  int max_depth = 6;
  double eta = 0.08;
  uint64_t seed = 42;
};

// The file extension of the trees a model set writes. XGBoost picks the
// format by it: ".ubj" is its binary UBJSON, which loads 7-13x faster than
// the JSON of earlier sets (still read: a set names its files).
inline constexpr const char* kXgbModelExtension = ".xgb.ubj";

// RAII owner of an XGBoost booster handle (C API).
// A manifest's n_features, read signed (get<size_t> turned -1 into 2^64-1,
// and a reserve() of it aborted): throws InputError naming `where` unless it
// is a plausible column count.
size_t checkedFeatureCount(int64_t n_features, const std::string& where);

class Booster {
 public:
  Booster();  // empty booster, to load into
  ~Booster();
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  // Trains on rows x (n x cols, row-major) against labels y.
  static std::unique_ptr<Booster> train(const std::vector<float>& x, size_t cols,
                                        const std::vector<float>& y, const XgbParams& p);
  // The trees at `path`, read when first used (predict, save): a model set
  // names every family's trees and one prediction needs a few (data/mlp 4
  // of the bundled host set's 8: its `predict` took 0.64x the time). The file
  // must exist now; one XGBoost cannot read throws InputError, naming it,
  // at its first use.
  // `n_features`: the columns the manifest says the trees read; trees that
  // read another count are refused at their first use, naming the file (a
  // wrong count failed inside XGBoosterPredict without naming either).
  static std::unique_ptr<Booster> loadWhenUsed(const std::string& path, size_t n_features);
  void save(const std::string& path) const;
  std::vector<float> predict(const std::vector<float>& x, size_t cols) const;

 private:
  Booster(std::string deferred_path, size_t n_features);
  void* handleLocked() const;  // under mu_: reads deferred trees first

  mutable void* handle_ = nullptr;
  mutable std::string deferred_path_;  // trees not read yet; empty once read
  size_t deferred_features_ = 0;       // the columns they must read
  mutable std::mutex mu_;  // XGBoosterPredict is not safe to call concurrently
};

// The booster's input row for one op: the family's columns `f.x` (NaN past
// their end), then, at `repeated_column` when the model has one, 1 when the op
// follows a copy of itself (OpFeatures::repeated). Training and prediction
// both build rows here, so the columns cannot disagree.
// At `reuse_column`, when the model has one, reuseColumnValue(f).
inline constexpr size_t kNoRepeatedColumn = static_cast<size_t>(-1);
inline constexpr size_t kNoReuseColumn = static_cast<size_t>(-1);
void appendBoosterRow(const OpFeatures& f, size_t n_features, size_t repeated_column,
                      std::vector<float>* rows, size_t reuse_column = kNoReuseColumn);

// The top of one op's calibrated sizes and the residual it had there. The
// trees extrapolate flat only along a family's range: an op larger than any
// of its own grid points, though smaller than other ops of its family, lands
// in leaves those other ops shaped. cnn_big's max_pool2d over 512 MB (its
// grid stops at 12.5 MB; sum and mean reach 32 MB) came out at 1.68 s
// against 0.56 s replayed, 8.6x the 12.5 MB time at 2x the size.
struct SizeEdge {
  double max_bytes = 0;  // OpFeatures::bytes of the op's largest grid point
  double log_ratio = 0;  // median log(measured / base) over its points >= max_bytes / 2
};
using SizeEdges = std::unordered_map<std::string, SizeEdge>;  // by OpFeatures::op
// The edge holds from this multiple of max_bytes: just past its grid an op's
// trees still do better (with the edge from 1x, the hold-out GMAE of a
// refitted bundle rose from 6.5 to 7.2% for copy and the view family's
// check flipped; from 2x every family scored as before).
inline constexpr double kBeyondEdge = 8.0;

// Per op, the largest analytic base time (us) among its points measured
// among other ops (OpFeatures::repeated false). Calibration interleaves only
// small points, where the context costs most (bf16 GEMMs on this CPU: 1.54x
// below 10 us, 1.14x at 10-30, 1.02x at 30-100); the trees carried that
// penalty to GEMMs measured only among copies of themselves (a 650 us mm
// predicted 900 us after another op, 667 after itself, 686 measured). Past
// its reach an op is predicted as measured there, in its own company; the
// code-cold term (host/code_cold.h) charges what a call after another op
// costs on top.
using InterleavedReach = std::unordered_map<std::string, double>;

class XgbResidualModel : public KernelModel {
 public:
  // `repeated_column`: kNoRepeatedColumn for models saved before the context
  // column (they still load and predict as they were trained). `edges`:
  // beyond an op's edge the residual is held at the edge's (models saved
  // without edges use the trees everywhere). `reach`: models saved without
  // one read the context column as it is everywhere.
  XgbResidualModel(std::shared_ptr<const KernelModel> base, std::shared_ptr<const Booster> booster,
                   size_t n_features, size_t repeated_column = kNoRepeatedColumn,
                   SizeEdges edges = {}, size_t reuse_column = kNoReuseColumn,
                   InterleavedReach reach = {});
  std::string kind() const override { return "xgboost"; }
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  void predictBatch(const std::vector<const OpFeatures*>& ops, const DeviceSpec& d,
                    std::vector<double>* out_us) const override;
  // Writes <dir>/<stem>.xgb.ubj (XGBoosterSaveModel) and the base's params.
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;
  static std::shared_ptr<const KernelModel> fromJson(const nlohmann::json& j,
                                                     const std::string& dir);
  const KernelModel& base() const { return *base_; }
  // Whether the trees read the inputs' reuse distance (OpFeatures::reuse_bytes).
  bool readsReuse() const { return reuse_column_ != kNoReuseColumn; }

 private:
  std::shared_ptr<const KernelModel> base_;
  std::shared_ptr<const Booster> booster_;
  size_t n_features_;
  size_t repeated_column_;
  SizeEdges edges_;
  size_t reuse_column_;
  InterleavedReach reach_;
};

// The analytic model under a learned residual, else `model` itself: the
// residual only scales the cache-hot time, the base says how DRAM is paid.
const KernelModel* analyticBase(const KernelModel* model);

}  // namespace tracetwin::predictors
