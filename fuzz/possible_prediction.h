// What the fuzz targets that end in a prediction require of one that was not
// refused: every time finite and not negative. A model or side file that
// loads and then gives inf, nan or a negative time is a silently wrong
// answer (the predictor refuses implausibly large times itself).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "predictors/simulation/predictor.h"

namespace tracetwin::fuzz {

inline bool possibleTime(double t) { return std::isfinite(t) && t >= 0; }

// Aborts (a finding for libFuzzer) on a time no op or step could take.
inline void requirePossible(const predictors::Prediction& p) {
  if (!possibleTime(p.iteration_ms)) {
    std::fprintf(stderr, "predicted a step of %g ms\n", p.iteration_ms);
    std::abort();
  }
  for (const auto& o : p.per_op) {
    if (!possibleTime(o.predicted_us) || !possibleTime(o.cpu_us)) {
      std::fprintf(stderr, "predicted op %lld (%s) at %g us device, %g us host\n",
                   static_cast<long long>(o.id), o.name.str().c_str(), o.predicted_us, o.cpu_us);
      std::abort();
    }
  }
}

}  // namespace tracetwin::fuzz
