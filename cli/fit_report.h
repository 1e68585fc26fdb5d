// The hold-out table `calibrate` and `fit` print after fitting: one row per
// op family, then the fit's notes.
#pragma once

#include "predictors/models/training.h"

namespace tracetwin::cli {

void printFitReport(const predictors::FitReport& report);

}  // namespace tracetwin::cli
