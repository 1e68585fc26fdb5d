#include "predictors/kernels/launch_counts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/errors.h"
#include "core/statistics.h"
#include "predictors/models/json_fields.h"

namespace tracetwin::predictors {
namespace {

// "aten::conv2d" -> "aten_conv2d": a file name.
std::string fileStem(const std::string& op) {
  std::string out;
  for (char ch : op) out.push_back(std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  return out;
}

std::shared_ptr<const Booster> trainCounts(const std::vector<const LaunchSample*>& points,
                                           size_t cols, const XgbParams& params) {
  std::vector<float> x, y;
  for (const LaunchSample* s : points) {
    appendBoosterRow(s->f, cols, kNoRepeatedColumn, &x);
    y.push_back(static_cast<float>(s->kernels));
  }
  return Booster::train(x, cols, y, params);
}

int roundedCount(float y) { return std::max(1, static_cast<int>(std::lround(y))); }

// Whether a point is in the held-out fifth: by a hash of its feature
// columns, so that a grid point measured alone and among other ops (two rows
// of one shape) falls on one side.
bool heldOut(const OpFeatures& f) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (float v : f.x) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ULL;
  }
  return (h >> 33) % 5 == 4;
}

// Trees fitted on four fifths of `points`, scored on the rest.
LaunchCountScore holdoutScore(const std::string& op, const std::vector<const LaunchSample*>& points,
                              size_t cols, int median, const XgbParams& params) {
  std::vector<const LaunchSample*> fit, hold;
  for (const LaunchSample* p : points) (heldOut(p->f) ? hold : fit).push_back(p);
  LaunchCountScore score;
  score.op = op;
  if (fit.empty() || hold.empty()) return score;
  const std::shared_ptr<const Booster> trees = trainCounts(fit, cols, params);
  std::vector<float> x;
  for (const LaunchSample* s : hold) appendBoosterRow(s->f, cols, kNoRepeatedColumn, &x);
  const std::vector<float> y = trees->predict(x, cols);
  score.holdout = static_cast<int64_t>(hold.size());
  for (size_t i = 0; i < hold.size() && i < y.size(); ++i) {
    const int predicted = roundedCount(y[i]);
    score.exact_share += predicted == hold[i]->kernels ? 1 : 0;
    score.mean_abs_miss += std::abs(predicted - hold[i]->kernels);
    score.median_share += median == hold[i]->kernels ? 1 : 0;
    score.median_abs_miss += std::abs(median - hold[i]->kernels);
  }
  const auto n = static_cast<double>(hold.size());  // not empty: returned above
  score.exact_share /= n;
  score.mean_abs_miss /= n;
  score.median_share /= n;
  score.median_abs_miss /= n;
  score.kept = score.mean_abs_miss < score.median_abs_miss;
  return score;
}

}  // namespace

LaunchCountModel LaunchCountModel::fit(const std::vector<LaunchSample>& samples,
                                       const XgbParams& params,
                                       std::vector<LaunchCountScore>* scores) {
  std::map<std::string, std::vector<const LaunchSample*>> by_op;
  for (const LaunchSample& s : samples)
    if (s.kernels >= 0) by_op[s.f.op].push_back(&s);
  LaunchCountModel m;
  for (const auto& [op, points] : by_op) {
    std::vector<double> counts;
    std::set<int> distinct;
    for (const LaunchSample* s : points) {
      counts.push_back(s->kernels);
      distinct.insert(s->kernels);
    }
    m.median_[op] = static_cast<int>(std::lround(core::median(counts)));
    const size_t cols = featureCount(points.front()->f.family);
    if (cols == 0 || distinct.size() < 2 || points.size() < kMinTreeSamples) continue;
    const LaunchCountScore score = holdoutScore(op, points, cols, m.median_[op], params);
    if (scores != nullptr) scores->push_back(score);
    if (!score.kept) continue;
    Trees t;
    t.booster = trainCounts(points, cols, params);
    t.n_features = cols;
    t.file = "launches." + fileStem(op) + kXgbModelExtension;
    m.trees_[op] = std::move(t);
  }
  return m;
}

std::vector<int> LaunchCountModel::predict(const std::string& op,
                                           const std::vector<const OpFeatures*>& ops) const {
  const auto median = median_.find(op);
  std::vector<int> out(ops.size(), median == median_.end() ? 1 : median->second);
  const auto trees = trees_.find(op);
  if (trees == trees_.end() || ops.empty()) return out;
  std::vector<float> x;
  x.reserve(ops.size() * trees->second.n_features);
  for (const OpFeatures* f : ops)
    appendBoosterRow(*f, trees->second.n_features, kNoRepeatedColumn, &x);
  const std::vector<float> y = trees->second.booster->predict(x, trees->second.n_features);
  for (size_t i = 0; i < ops.size() && i < y.size(); ++i) out[i] = roundedCount(y[i]);
  return out;
}

nlohmann::json LaunchCountModel::save(const std::string& dir) const {
  nlohmann::json trees = nlohmann::json::object();
  for (const auto& [op, t] : trees_) {
    t.booster->save((std::filesystem::path(dir) / t.file).string());
    trees[op] = {{"file", t.file}, {"n_features", t.n_features}};
  }
  return {{"median", median_}, {"trees", trees}};
}

LaunchCountModel LaunchCountModel::fromJson(const nlohmann::json& j, const std::string& dir,
                                            const std::string& source) {
  LaunchCountModel m;
  try {
    // Kernels per call: a float of 1e300 read as int was undefined behaviour.
    constexpr int64_t kMaxLaunches = int64_t{1} << 20;
    const nlohmann::json& medians = j.at("median");
    if (!medians.is_object())
      throw InputError(fmt::format("{}: launch_counts.median: expected an object", source));
    for (const auto& item : medians.items()) {
      const std::string& op = item.key();
      const int64_t n = requiredCount(medians, op.c_str(), source + ": launch_counts.median");
      if (n > kMaxLaunches) {
        throw InputError(
            fmt::format("{}: launch_counts.median.{}: {} kernels per call, expected at "
                        "most {}",
                        source, op, n, kMaxLaunches));
      }
      m.median_[op] = static_cast<int>(n);
    }
    for (const auto& [op, entry] : j.at("trees").items()) {
      if (m.median_.count(op) == 0)
        throw InputError(fmt::format("{}: launch_counts.trees.{}: no median count", source, op));
      Trees t;
      t.file = entry.at("file").get<std::string>();
      if (t.file.find('/') != std::string::npos || t.file.find("..") != std::string::npos)
        throw InputError(
            fmt::format("{}: launch_counts.trees.{}.file: '{}' is not a file name "
                        "in the model directory",
                        source, op, t.file));
      const std::string where = fmt::format("{}: launch_counts.trees.{}", source, op);
      t.n_features = checkedFeatureCount(requiredCount(entry, "n_features", where), where);
      const std::filesystem::path path = std::filesystem::path(dir) / t.file;
      if (!std::filesystem::exists(path))
        throw InputError(fmt::format("{}: launch-count trees of {} missing (listed in {})",
                                     path.string(), op, source));
      t.booster = Booster::loadWhenUsed(path.string(),
                                        t.n_features);  // read when an op of it is first counted
      m.trees_[op] = std::move(t);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: launch_counts malformed: {}", source, e.what()));
  }
  return m;
}

}  // namespace tracetwin::predictors
