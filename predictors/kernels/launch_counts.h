// How many kernels an op launches on a GPU, learned from the kernel counts a
// GPU calibration recorded for every point.
//
// The host pays per launch (host_costs.h), and the count follows the shape:
// cuDNN picks an algorithm per convolution, with layout conversions and
// split reductions around it, so an H200 ran conv2d with 1 to 6 kernels and
// convolution_backward with 1 to 11. resnet_1.1.0's 53 backward convolutions
// took 75 us each on the host against 37 from one host time per op name.
//
// Per op name, the median count over its points; and for an op whose points
// launched several counts, trees on its family's feature columns
// (features.h) that predict the count from the shape, kept where they miss a
// fifth of the points held out of them by less than the median does (on the
// H200 rows not for batch_norm: 93% of its points launch its median count).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predictors/kernels/features.h"
#include "predictors/kernels/xgb_model.h"

namespace tracetwin::predictors {

struct LaunchSample {
  OpFeatures f;
  int kernels = 0;
};

// How well an op's trees predicted the counts of a fifth of its points they
// were not fitted on (before the trees were fitted again on all of them).
struct LaunchCountScore {
  std::string op;
  int64_t holdout = 0;
  double exact_share = 0;    // share of hold-out points predicted exactly
  double mean_abs_miss = 0;  // mean |predicted - launched| kernels
  double median_share = 0;   // exact share of the op's median count, for comparison
  double median_abs_miss = 0;
  // Whether the trees were kept: they missed by less than the median did
  // (else the op takes its median count).
  bool kept = false;
};

class LaunchCountModel {
 public:
  // Trees need this many points of an op, with at least two counts.
  static constexpr size_t kMinTreeSamples = 40;
  // Fewer, steeper rounds than the kernel models': a count is a small whole
  // number: the trees of the H200 set's 12 ops take 2.3 MB on disk (13 ops
  // took ~7 MB with the kernel models' 300 rounds at eta 0.08).
  static XgbParams treeParams(uint64_t seed) { return {100, 6, 0.2, seed}; }

  // `scores` (optional): one per op whose counts varied enough for trees.
  static LaunchCountModel fit(const std::vector<LaunchSample>& samples, const XgbParams& params,
                              std::vector<LaunchCountScore>* scores = nullptr);

  bool empty() const { return median_.empty(); }
  // Whether the model knows the op (by OpFeatures::op).
  bool knows(const std::string& op) const { return median_.count(op) > 0; }
  // The count of each op of `ops` (all of one op name the model knows): the
  // trees' rounded prediction, at least 1, else the op's median.
  std::vector<int> predict(const std::string& op, const std::vector<const OpFeatures*>& ops) const;

  // Trees go to files in `dir` ("launches.<op>.xgb.ubj").
  nlohmann::json save(const std::string& dir) const;
  // Throws InputError naming `source` on a malformed object or missing file.
  static LaunchCountModel fromJson(const nlohmann::json& j, const std::string& dir,
                                   const std::string& source);

 private:
  struct Trees {
    std::shared_ptr<const Booster> booster;
    size_t n_features = 0;
    std::string file;
  };
  std::map<std::string, int> median_;   // by op name
  std::map<std::string, Trees> trees_;  // ops whose counts vary with shape
};

}  // namespace tracetwin::predictors
