// `tracetwin calibrate --families sparse_add`: SGD's sparse add_ measured in
// LibTorch over its grid (calibration/sparse_add_sweep.h), fitted warm and
// evicted, and written as DIR/sparse_add.json beside the model set's kernel
// models (ModelSet::load reads it when present).
#pragma once

#include <string>

#include "calibration/sparse_add_sweep.h"

namespace tracetwin::cli {

struct SparseAddCalibrationArgs {
  std::string out_dir;
  calibration::SparseAddGrid grid;
  replay::SparseAddBenchOptions bench;
};

void calibrateSparseAddFamily(const SparseAddCalibrationArgs& args);

}  // namespace tracetwin::cli
