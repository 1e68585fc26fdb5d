// code_cold_probe: what a small op costs on this host after its code sat idle,
// against what a model set's code-cold term (predictors/host/code_cold.h)
// predicts for the same idle time. The term was fitted once, at calibration;
// on a shared VM the rate at which idle code goes cold moves with the other
// tenants, so this says whether the fit still describes the host.
//
//   bench/code_cold_probe [--models DIR] [--rounds 60] [--idle-ms 0,1,3,7.5,15]
//
// Each small op (cross_entropy_loss of [32, 10] logits, add_ of [256, 256],
// t) is timed after an idle period filled two ways, alternated round by
// round: repeated mm of [128, 128] (compute-bound, one kernel's code, 0.2 MB
// of data) and a mixed spacer of a dozen other ops (linear, softmax,
// layer_norm, conv2d, batch_norm, pooling, cat, gelu, ...). If the penalty
// were the intervening ops evicting the op's code and data, the mixed spacer
// would cost more than the mm at the same idle time. Medians per idle time.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/statistics.h"
#include "predictors/models/model_set.h"

namespace {

using Clock = std::chrono::steady_clock;

double elapsedUs(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

struct SmallOp {
  std::string name;    // as the model set names it
  std::string family;  // core::opFamily's
  std::function<void()> call;
};

struct Spacers {
  at::Tensor a = at::randn({128, 128}), b = at::randn({128, 128});
  at::Tensor x = at::randn({64, 256}), w1 = at::randn({256, 256}), w2 = at::randn({256, 256});
  at::Tensor image = at::randn({2, 16, 16, 16}), filter = at::randn({16, 16, 3, 3});
  at::Tensor square = at::randn({64, 64});

  void mm(int n) const {
    for (int i = 0; i < n; ++i) at::mm(a, b);
  }
  void mixed(int n) const {
    for (int i = 0; i < n; ++i) {
      const at::Tensor h = at::relu(at::mm(x, w1));
      const at::Tensor o = at::mm(h, w2);
      at::softmax(o, 1);
      at::layer_norm(o, {256});
      const at::Tensor c = at::conv2d(image, filter, {}, 1, 1);
      const at::Tensor n2 = at::batch_norm(c, {}, {}, {}, {}, true, 0.1, 1e-5, false);
      at::sigmoid(at::max_pool2d(n2, {2, 2})).sum();
      const at::Tensor t = at::tanh(square);
      at::cat({t, t});
      at::dropout(at::gelu(o), 0.1, true).t().contiguous();
    }
  }
};

// Calls of `fill` that take about `us` (0 for none), from its timed average.
int callsFor(double us, const std::function<void(int)>& fill) {
  if (us <= 0) return 0;
  const auto t0 = Clock::now();
  fill(5);
  const double each = elapsedUs(t0, Clock::now()) / 5;
  return std::max(1, static_cast<int>(us / each + 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A small op's time after idle code, against a model set's code-cold term"};
  std::string models;
  int rounds = 60;
  std::vector<double> idle_ms = {0, 1, 3, 7.5, 15};
  app.add_option("--models", models, "a model set: print its code-cold prediction beside");
  app.add_option("--rounds", rounds, "timed calls per op, spacer and idle time")
      ->check(CLI::PositiveNumber);
  app.add_option("--idle-ms", idle_ms, "idle times (ms) before the op")->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  try {
    at::set_num_threads(1);  // as the bundled models were calibrated
    tracetwin::predictors::CodeColdModel model;
    if (!models.empty()) model = tracetwin::predictors::ModelSet::load(models).code_cold;
    const at::Tensor logits = at::randn({32, 10});
    const at::Tensor target = at::randint(0, 10, {32}, at::kLong);
    at::Tensor grown = at::randn({256, 256});
    const at::Tensor step = at::randn({256, 256});
    const std::vector<SmallOp> ops = {
        {"aten::cross_entropy_loss", "softmax", [&] { at::cross_entropy_loss(logits, target); }},
        {"aten::add_", "elementwise", [&] { grown.add_(step, 1e-9); }},
        {"aten::t", "view", [&] { step.t(); }},
    };
    const Spacers spacers;
    fmt::print("{:<26} {:>8} {:>14} {:>14} {:>14}\n", "op", "idle ms", "after mm us",
               "after mixed us", models.empty() ? "" : "model us");
    for (const SmallOp& op : ops) {
      auto timed = [&op] {
        const auto t0 = Clock::now();
        op.call();
        return elapsedUs(t0, Clock::now());
      };
      for (int i = 0; i < 50; ++i) timed();
      for (double ms : idle_ms) {
        const int n_mm = callsFor(ms * 1000, [&](int n) { spacers.mm(n); });
        const int n_mixed = callsFor(ms * 1000, [&](int n) { spacers.mixed(n); });
        std::vector<double> after_mm, after_mixed;
        for (int r = 0; r < rounds; ++r) {
          spacers.mm(n_mm);
          after_mm.push_back(timed());
          spacers.mixed(n_mixed);
          after_mixed.push_back(timed());
        }
        const double warm_model = model.penaltyUs(op.name, op.family, ms * 1000, 0);
        fmt::print("{:<26} {:>8.1f} {:>14.1f} {:>14.1f} {:>14}\n", op.name, ms,
                   tracetwin::core::median(after_mm), tracetwin::core::median(after_mixed),
                   models.empty() ? std::string() : fmt::format("+{:.1f}", warm_model));
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "code_cold_probe: {}\n", e.what());
    return 1;
  }
  return 0;
}
