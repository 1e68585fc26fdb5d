#include "calibration/family_sweep.h"

#include <fmt/core.h>

#include <iterator>

#include "calibration/cold_units.h"
#include "calibration/evicted_units.h"
#include "calibration/grid_selection.h"
#include "calibration/spaced_units.h"

namespace tracetwin::calibration {
namespace {

// Sweeps on within `share_s` seconds; appends rows and failures. Points too
// big for what is left are passed over (smaller ones may still fit) and stay
// for a later pass.
void continueSweep(FamilySweep& s, const CalibrationOptions& o, UnitMeasurer& measure,
                   double share_s, const BudgetClock& clock, double t0, CostModel& cost,
                   CalibrationResult& result) {
  const double start = clock.now();
  std::vector<ReplayUnit> passed_over;
  int consecutive_skips = 0;
  for (; s.next < s.cases.size(); ++s.next) {
    const ReplayUnit& c = s.cases[s.next];
    const double used = clock.since(start);
    if (used >= share_s || consecutive_skips > 200) break;
    const int iters = itersFor(c.est_us);
    if (used + cost.predictS(c, iters) > share_s) {
      ++consecutive_skips;
      passed_over.push_back(c);
      continue;
    }
    consecutive_skips = 0;
    const double case_start = clock.now();
    CaseOutcome outcome = measure(c, o, &s.run.host_reruns);
    cost.observe(c, iters, clock.since(case_start));
    FamilyRun& run = s.run;
    const int64_t points = static_cast<int64_t>(c.cases.size());
    if (!outcome.failure.empty()) {
      ++run.failed;
      if (result.failures.size() < 20) {
        result.failures.push_back(c.cases[0].label + (points > 1 ? " (+ group)" : "") + ": " +
                                  outcome.failure);
      }
    }
    if (!outcome.rows.empty()) run.replayed += outcome.failure.empty() ? points : points - 1;
    if (outcome.failure.empty() && !outcome.rows.empty()) s.measured.push_back(c);
    if (outcome.between) result.between_ops.push_back(*outcome.between);
    for (DatasetRow& row : outcome.rows) result.rows.push_back(std::move(row));
    if (o.on_progress) {
      o.on_progress({s.family->name, run.replayed + run.failed, s.case_runs, clock.since(t0),
                     o.budget_s, c.cases.back().label});
    }
  }
  // Passed-over points go back in front of the unvisited ones.
  s.cases.erase(s.cases.begin(), s.cases.begin() + static_cast<std::ptrdiff_t>(s.next));
  s.cases.insert(s.cases.begin(), passed_over.begin(), passed_over.end());
  s.next = 0;
  s.run.seconds += clock.since(start);
}

}  // namespace

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

FamilySweep startSweep(const MicrobenchFamily& fam, const CalibrationOptions& o,
                       int64_t evict_bytes) {
  FamilySweep s;
  s.family = &fam;
  std::vector<MicrobenchCase> cases = gridCases(fam, gridFor(o.device, o.dtypes), o.case_filter);
  const size_t grid_points = cases.size();
  orderForSweep(cases, o.seed ^ std::hash<std::string>{}(fam.name));
  // Units in sampling order; a group of small cases takes the place of the
  // case that filled it.
  // CPU: the first kColdGroups full groups are followed by their cold and
  // evicted copies, so both sides of each pair are measured moments apart.
  const int cold_groups = o.device == "cpu" ? kColdGroups : 0;
  int cold_made = 0;
  ReplayUnit pending;
  for (MicrobenchCase& c : cases) {
    const double est = c.est_us;
    s.cases.push_back({{c}, est});  // on its own, among copies of itself
    if (!interleavable(c)) continue;
    pending.est_us += c.copy_us * kRounds;
    pending.cases.push_back(std::move(c));
    if (pending.cases.size() == kGroupCases) {
      s.cases.push_back(std::move(pending));
      pending = {};
      if (cold_made < cold_groups) {
        const ReplayUnit group = s.cases.back();
        // The evicted unit first: one unit, where the cold ones are four;
        // a sweep cut short (a budget of seconds on a loaded host) then
        // still measures both kinds.
        s.cases.push_back(evictedUnit(group, evict_bytes));
        for (int64_t n : kBusySpacerSizes) {
          for (bool rewarm : {false, true}) s.cases.push_back(coldUnit(group, n, rewarm));
        }
        ++cold_made;
      }
    }
  }
  if (pending.cases.size() > 1) s.cases.push_back(std::move(pending));
  // CPU memory-bound families: the spaced units after the grid. Each streams
  // up to 128 MiB per round (~0.2 s a unit, 84 units for elementwise); placed
  // early, they took most of an 8 s two-family calibration, and under a
  // loaded host the other family measured nothing. A grid point is what the
  // kernel models need first; the distances refine them.
  if (o.device == "cpu" && spacedFamily(fam.name)) {
    std::vector<ReplayUnit> spaced =
        spacedUnits(gridCases(fam, gridFor(o.device, o.dtypes), o.case_filter));
    s.cases.insert(s.cases.end(), std::make_move_iterator(spaced.begin()),
                   std::make_move_iterator(spaced.end()));
  }
  for (const ReplayUnit& u : s.cases) s.case_runs += static_cast<int64_t>(u.cases.size());
  s.run.family = fam.name;
  s.run.grid_points = static_cast<int64_t>(grid_points);
  return s;
}

void sweepPass(std::vector<FamilySweep>& sweeps, const CalibrationOptions& o, UnitMeasurer& measure,
               const BudgetClock& clock, double t0, CostModel& cost, CalibrationResult& result) {
  double weight_left = 0;
  for (const FamilySweep& s : sweeps) weight_left += s.exhausted() ? 0 : s.family->budget_weight;
  for (FamilySweep& s : sweeps) {
    if (s.exhausted()) continue;
    const double left = std::max(0.0, o.budget_s - clock.since(t0));
    const double share = left * s.family->budget_weight / weight_left;
    weight_left -= s.family->budget_weight;
    continueSweep(s, o, measure, share, clock, t0, cost, result);
  }
}

void repeatPasses(std::vector<FamilySweep>& sweeps, const CalibrationOptions& o,
                  UnitMeasurer& measure, const BudgetClock& clock, double t0,
                  CalibrationResult& result) {
  for (int r = 1; r < o.repeats; ++r) {
    for (FamilySweep& s : sweeps) {
      const double start = clock.now();
      for (const ReplayUnit& u : s.measured) {
        if (clock.since(t0) >= o.budget_s) return;
        CaseOutcome outcome = measure(u, o, &s.run.host_reruns);
        if (!outcome.failure.empty()) continue;  // the first pass's figures stand
        s.run.repeated_runs += static_cast<int64_t>(u.cases.size());
        if (outcome.between) result.between_ops.push_back(*outcome.between);
        for (DatasetRow& row : outcome.rows) result.rows.push_back(std::move(row));
        if (o.on_progress) {
          o.on_progress({s.family->name, s.run.replayed + s.run.failed, s.case_runs,
                         clock.since(t0), o.budget_s,
                         fmt::format("repeat {}: {}", r + 1, u.cases.back().label)});
        }
      }
      s.run.seconds += clock.since(start);
    }
  }
}

}  // namespace tracetwin::calibration
