// What the fuzz targets that end in a prediction share: a scratch directory
// for the files they write, model sets loaded once, and what they require of
// a prediction that was not refused: every time finite and not negative. A
// model or side file that loads and then gives inf, nan or a negative time is
// a silently wrong answer (the predictor refuses implausibly large times
// itself).
#pragma once

#include <stdlib.h>  // mkdtemp

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"

namespace tracetwin::fuzz {

// A fresh directory under the system's temporary one, named from `prefix`.
inline std::string scratchDirectory(const char* prefix) {
  std::string dir = (std::filesystem::temp_directory_path() / prefix).string() + "-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  return dir;
}

// The model set in `dir`, never destroyed: its boosters belong to the
// XGBoost library loaded at run time, whose own statics may be gone by the
// time a static set's destructor ran (it crashed at exit).
inline const predictors::ModelSet& modelsNeverFreed(const std::string& dir) {
  return *new predictors::ModelSet(predictors::ModelSet::load(dir));
}

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
