#include "predictors/host/between_ops.h"

#include <fmt/core.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace tracetwin::predictors {
namespace {

constexpr int kColumns = 4;

double column(const BetweenOpsSample& s, int c) {
  return c == 0 ? s.ops : c == 1 ? s.produced : c == 2 ? s.op_us : s.wrapped;
}

// Weighted least squares over the active columns (0: ops, 1: produced,
// 2: op time, 3: wrapped numbers); coefficients of inactive columns are 0.
// A column that is 0 in every sample is left out.
std::vector<double> solve(const std::vector<BetweenOpsSample>& s, const std::vector<bool>& active) {
  std::vector<int> cols;
  for (int c = 0; c < kColumns; ++c) {
    const bool used = std::any_of(s.begin(), s.end(),
                                  [c](const BetweenOpsSample& x) { return column(x, c) != 0; });
    if (active[size_t(c)] && used) cols.push_back(c);
  }
  std::vector<double> out(kColumns, 0.0);
  if (cols.empty()) return out;
  Eigen::MatrixXd a(static_cast<Eigen::Index>(s.size()), static_cast<Eigen::Index>(cols.size()));
  Eigen::VectorXd y(static_cast<Eigen::Index>(s.size()));
  for (size_t i = 0; i < s.size(); ++i) {
    // between = iteration - sum(op medians): its noise grows with the
    // iteration, so relative weights keep the long graphs from deciding.
    const double w = 1.0 / std::max(s[i].iteration_us, 50.0);
    const auto r = static_cast<Eigen::Index>(i);
    for (size_t c = 0; c < cols.size(); ++c)
      a(r, static_cast<Eigen::Index>(c)) = w * column(s[i], cols[c]);
    y(r) = w * s[i].between_us;
  }
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(y);
  for (size_t c = 0; c < cols.size(); ++c) out[size_t(cols[c])] = x(static_cast<Eigen::Index>(c));
  return out;
}

}  // namespace

BetweenOpsFit fitBetweenOps(const std::vector<BetweenOpsSample>& samples) {
  BetweenOpsFit fit;
  fit.samples = static_cast<int64_t>(samples.size());
  if (samples.size() < 8) return fit;
  // Non-negative least squares the simple way: drop the most negative
  // coefficient and refit, until none is negative.
  std::vector<bool> active(kColumns, true);
  std::vector<double> x = solve(samples, active);
  for (int round = 0; round < kColumns; ++round) {
    const auto worst = std::min_element(x.begin(), x.end());
    if (*worst >= 0) break;
    active[size_t(worst - x.begin())] = false;
    x = solve(samples, active);
  }
  for (double v : x) {
    if (!std::isfinite(v)) return fit;
  }
  fit.per_op_us = std::max(x[0], 0.0);
  fit.per_output_us = std::max(x[1], 0.0);
  fit.share_of_op_time = std::max(x[2], 0.0);
  fit.per_wrapped_us = std::max(x[3], 0.0);
  fit.ok = true;
  return fit;
}

void applyBetweenOps(const BetweenOpsFit& fit, OverheadTable* table) {
  if (!fit.ok) return;
  auto& t1 = table->t[static_cast<int>(Overhead::kT1)];
  t1[kAllOps] = {fit.per_op_us, 0.0, fit.samples};
  t1[kPerOutputTensor] = {fit.per_output_us, 0.0, fit.samples};
  t1[kShareOfOpTime] = {fit.share_of_op_time, 0.0, fit.samples};
  t1[kPerWrappedNumber] = {fit.per_wrapped_us, 0.0, fit.samples};
  table->sources.push_back(fmt::format(
      "calibration: between ops {:.3f} us per op + {:.3f} us per produced tensor + {:.2f}% of "
      "op time + {:.3f} us per wrapped number ({} microbenchmark graphs)",
      fit.per_op_us, fit.per_output_us, 100 * fit.share_of_op_time, fit.per_wrapped_us,
      fit.samples));
}

int producedTensors(const core::Node& node) {
  int produced = 0;
  for (const core::Value& out : node.outputs) {
    core::forEachTensor(out, [&](const core::TensorValue& t) {
      if (!t.defined()) return;
      bool aliases_input = false;
      for (const core::Value& in : node.inputs) {
        core::forEachTensor(in, [&](const core::TensorValue& u) {
          aliases_input |= u.storage_id == t.storage_id && u.tensor_id == t.tensor_id;
        });
      }
      produced += aliases_input ? 0 : 1;
    });
  }
  return produced;
}

std::vector<int> wrappedNumbers(const std::vector<const core::Node*>& ops) {
  auto cpuScalar = [](const core::TensorValue& t) {
    return t.defined() && t.shape.empty() && t.numel == 1 && t.device.rfind("cpu", 0) == 0;
  };
  std::vector<int> out(ops.size(), 0);
  // Only CPU scalars are ever looked up: the set holds those alone (a 100k-op
  // graph produces ~100k other tensors).
  std::set<std::tuple<int64_t, int64_t, core::DType>> produced;  // tensor, storage, dtype
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const core::Value& in : ops[i]->inputs) {
      core::forEachTensor(in, [&](const core::TensorValue& t) {
        if (cpuScalar(t) && produced.count({t.tensor_id, t.storage_id, t.dtype}) == 0) ++out[i];
      });
    }
    for (const core::Value& o : ops[i]->outputs) {
      core::forEachTensor(o, [&](const core::TensorValue& t) {
        if (cpuScalar(t)) produced.insert({t.tensor_id, t.storage_id, t.dtype});
      });
    }
  }
  return out;
}

}  // namespace tracetwin::predictors
