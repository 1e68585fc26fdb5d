// Communication models learned from measured collectives (docs/prediction.md
// "Communication models"): per collective, alpha and beta of the alpha-beta
// terms (comm_model.h) in one or two size regimes, fitted by least relative
// squares over every group size measured; and each measurement in
// nccl-tests' algbw / busbw convention. The samples come from `calibrate
// --families comm` (the distributed replay) or from multi-rank Kineto traces
// (`fit`: the last-arriving rank's kernel).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "predictors/comm/comm_model.h"

namespace tracetwin::predictors {

struct CommSample {
  std::string collective;  // canonical ("all_reduce" ...); other spellings are canonicalised
  int64_t group_size = 1;
  double bytes = 0;     // nccl-tests' size: the buffer (all_gather: the gathered output)
  double seconds = 0;   // the transfer, from the last member's arrival
};

// One measured point (samples of the same collective, group size and bytes
// pooled by their median) in nccl-tests' terms.
struct CommPoint {
  std::string collective;
  int64_t group_size = 1;
  double bytes = 0;
  double seconds = 0;      // median of its samples
  int64_t samples = 0;
  double algbw_gbps = 0;   // bytes / seconds, GB/s
  double busbw_gbps = 0;   // algbw * busBandwidthFactor
  double predicted_s = 0;  // the fitted model's time
};

struct CommCollectiveFit {
  std::string collective;
  std::vector<AlphaBetaModel::Regime> regimes;  // ascending; the last covers any size
  double mean_abs_error = 0;  // |predicted / measured - 1| over its points
  int64_t points = 0;
};

struct CommFit {
  std::vector<CommCollectiveFit> collectives;
  std::vector<CommPoint> points;  // by collective, group size, bytes
  std::vector<std::string> notes;  // collectives left out and why
};

// Pools the samples into points and fits each collective (group sizes of 1
// move nothing and are left out). A second regime is kept where splitting
// the sizes at one of the measured ones cuts the squared relative error by
// a fifth or more, with at least two sizes on each side.
CommFit fitCommModels(const std::vector<CommSample>& samples);

// Sets the fitted regimes (and per_collective, their largest) on `model`.
void applyCommFit(const CommFit& fit, AlphaBetaModel* model);

}  // namespace tracetwin::predictors
