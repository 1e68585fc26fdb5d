// libFuzzer entry point for sweep files (configs/sweeps/*.yaml): any input
// must give a SweepSpec or a tracetwin::Error, and a spec that loads must
// carry on through what `tracetwin sweep` does before it predicts: its plans
// expanded (every strategy, greedy with made-up table costs), each plan's
// per-rank memory, and the first plan's per-rank graphs built and finalized.
// A file that loads but then breaks a later step with an uncaught exception,
// a sanitizer report or a hang is a bug the loader should have refused.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"
#include "sweep/strategies.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracetwin::sweep;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const SweepSpec spec = parseSweepSpec(text, "fuzz.yaml");
    // Made-up costs: what greedy and greedy_split do with them is the same
    // code whatever the numbers' source.
    const TableCosts costs = [&spec] {
      std::vector<double> c;
      for (const TableSpec& t : spec.tables) c.push_back(double(t.rows) * double(t.pooling));
      return c;
    };
    const std::vector<Plan> plans = expandPlans(spec, costs);
    // The first plans only: each is checked by the same code, and a seed's
    // 10,000-plan search (configs/sweeps/bench_64x8.yaml) took 13 s under
    // the sanitizers, which slowed every mutation of it alike.
    constexpr size_t kCheckedPlans = 64;
    for (size_t p = 0; p < plans.size() && p < kCheckedPlans; ++p) {
      const Plan& plan = plans[p];
      const std::vector<Placement> place = placementsOf(plan);
      for (int r = 0; r < spec.world_size; ++r) (void)rankMemoryBytes(spec, place, r);
      (void)planKey(plan);
    }
    if (!plans.empty()) (void)buildGraphs(spec, placementsOf(plans.front()), spec.world_size);
  } catch (const tracetwin::Error&) {
    return 0;  // refusing bad input with a typed error is the expected outcome
  }
  return 0;
}
