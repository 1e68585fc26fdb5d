// What `calibrate` and `fit` print after fitting: the hold-out table (one row
// per op family, then the fit's notes) and the communication fit.
#pragma once

#include "predictors/comm/comm_fit.h"
#include "predictors/models/training.h"

namespace tracetwin::cli {

void printFitReport(const predictors::FitReport& report);

// The communication fit and every point (nccl-tests' algbw / busbw), as
// `calibrate --families comm` and `fit` on a job's ranks print them.
void printCommFit(const predictors::CommFit& fit);

}  // namespace tracetwin::cli
