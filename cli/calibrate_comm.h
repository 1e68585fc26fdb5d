// `tracetwin calibrate --families comm`: the communication sweep
// (calibration/comm_sweep.h) run through the distributed replay on each
// group size, fitted per collective (predictors/comm/comm_fit.h), reported in
// nccl-tests' algbw / busbw convention and saved as the model set's comm
// model.
#pragma once

#include <string>

#include "calibration/comm_sweep.h"

namespace tracetwin::cli {

struct CommCalibrationArgs {
  std::string out_dir;
  std::string device = "cpu";  // cpu (Gloo) or cuda (NCCL, one GPU per rank)
  calibration::CommGrid grid;
  int warmup = 1;
  int iters = 10;
  double comm_timeout_s = 120;
};

void calibrateComm(const CommCalibrationArgs& args);

}  // namespace tracetwin::cli
