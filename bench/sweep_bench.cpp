// bench_sweep: the speed target of issue 36. configs/sweeps/bench_64x8.yaml
// (64 tables, 8 ranks, 10,003 table-wise plans) swept end to end as
// `tracetwin sweep` does it (plans expanded, every plan screened by the
// composed model, the best 5 predicted jointly) against predicting one plan
// jointly, in interleaved rounds (A, B, A, B ...; medians). Then how well the
// composed screen orders plans: composed vs joint on 12 plans of the file
// (Kendall tau, and whether both pick the same best).
//   build/bench/bench_sweep [rounds=3] [models=data/models/host]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bench/bench_paths.h"
#include "predictors/models/model_set.h"
#include "sweep/composed_model.h"
#include "sweep/strategies.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

namespace {

using namespace tracetwin;

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double kendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  int64_t concordant = 0, discordant = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double s = (a[i] - a[j]) * (b[i] - b[j]);
      if (s > 0) ++concordant;
      if (s < 0) ++discordant;
    }
  }
  const double n = double(a.size() * (a.size() - 1) / 2);
  return double(concordant - discordant) / n;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::stoi(argv[1]) : 3;
  const sweep::SweepSpec spec =
      sweep::loadSweepSpec(bench::sourcePath("configs/sweeps/bench_64x8.yaml"));
  const predictors::ModelSet models = predictors::ModelSet::load(
      argc > 2 ? std::string(argv[2]) : bench::sourcePath("data/models/host"));
  sweep::SweepOptions options;
  std::vector<double> one, all;
  size_t plan_count = 0;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    const sweep::Plan rr{
        "rr", "round_robin", sweep::roundRobinAssign(spec.tables.size(), spec.world_size), {}};
    const sweep::PlanResult single = sweep::predictPlan(spec, rr, models, options);
    one.push_back(seconds(t0));
    t0 = std::chrono::steady_clock::now();
    // As `tracetwin sweep` does: the composed model fitted once, for greedy's
    // table costs and the screen.
    const sweep::ComposedModel fitted = sweep::calibrateComposed(spec, models, options.predict);
    const auto plans = sweep::expandPlans(spec, [&] { return fitted.tableCosts(); });
    sweep::SweepOptions o = options;
    o.composed = &fitted;
    const auto ranked = sweep::runSweep(spec, plans, models, o);
    all.push_back(seconds(t0));
    plan_count = plans.size();
    fmt::print("round {}: one plan {:.3f} s ({:.3f} ms step); {} plans {:.3f} s (best {} {:.3f} ms)\n",
               r + 1, one.back(), single.predicted_ms, plans.size(), all.back(),
               ranked[0].plan.name, ranked[0].predicted_ms);
  }
  const double a = median(one), b = median(all);
  fmt::print("\n{} plans of 64 tables on 8 ranks: {:.2f} s (median of {} rounds; target <= 10 s: {})\n",
             plan_count, b, rounds, b <= 10 ? "met" : "MISSED");
  fmt::print("one plan predicted jointly: {:.3f} s; the whole sweep = {:.1f} joint plans' time, "
             "{:.3f} ms a plan\n",
             a, b / a, 1000 * b / double(plan_count));

  // How the composed screen orders plans against the joint prediction.
  const sweep::ComposedModel composed =
      sweep::calibrateComposed(spec, models, options.predict);
  const auto plans = sweep::expandPlans(spec, [&] { return composed.tableCosts(); });
  std::vector<double> c, j;
  for (size_t k = 0; k < 12; ++k) {
    const sweep::Plan& p = plans[k * (plans.size() / 12)];
    c.push_back(composed.estimate(p).predicted_ms);
    j.push_back(sweep::predictPlan(spec, p, models, options).predicted_ms);
    fmt::print("  {:<14} composed {:8.3f} ms  joint {:8.3f} ms  ({:+.1f}%)\n", p.name, c.back(),
               j.back(), 100 * (c.back() / j.back() - 1));
  }
  const size_t best_c = size_t(std::min_element(c.begin(), c.end()) - c.begin());
  const size_t best_j = size_t(std::min_element(j.begin(), j.end()) - j.begin());
  fmt::print("composed vs joint on 12 plans: Kendall tau {:.3f}; same best plan: {}\n",
             kendallTau(c, j), best_c == best_j ? "yes" : "no");
  return 0;
}
