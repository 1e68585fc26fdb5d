// The communication sweep of `calibrate --families comm` (docs/calibration.md
// "Communication"): collectives x message sizes, written as one execution
// trace per group size that the distributed replay runs on that many ranks
// (Gloo on a CPU, NCCL on GPUs), and the transfers its report measured read
// back as samples for the alpha-beta fit (predictors/comm/comm_fit.h).
// Torch-free: the replay runs in the rank processes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph.h"
#include "predictors/comm/comm_fit.h"

namespace tracetwin::calibration {

struct CommGrid {
  // As torch.distributed names them; all_to_all is all_to_all_single with
  // an even split, all_gather and reduce_scatter their single-tensor forms.
  std::vector<std::string> collectives = {"all_reduce", "all_gather", "reduce_scatter",
                                          "all_to_all", "broadcast"};
  // nccl-tests' size: the buffer (all_gather: the gathered output,
  // reduce_scatter: the input), 1 KiB .. 16 MiB by 4x.
  std::vector<int64_t> sizes_bytes = {1 << 10, 1 << 12, 1 << 14, 1 << 16,
                                      1 << 18, 1 << 20, 1 << 22, 1 << 24};
  std::vector<int> group_sizes = {2, 3, 4};
  int copies = 3;  // of each point per iteration (more samples per launch)
  // Each measured collective follows a float32 mm of this n x n by n x n on
  // every rank (0: none, collectives back to back as in nccl-tests' loop). A
  // training step's collectives meet ranks that were computing: on this
  // 2-vCPU host a 1.6 MB Gloo all-reduce took 1.4-2.4 ms in a tight loop and
  // 3.3-5.0 ms after 8 ms of compute (docs/calibration.md, "Communication").
  // The mm reads the collectives' storage, so it waits for the one before.
  int spacer_mm = 256;
};

// Throws UsageError for an unknown collective, a size below 4 bytes per
// rank or a group size below 2.
void checkCommGrid(const CommGrid& grid);

struct CommSweepCase {
  core::NodeId node = core::kNoNode;
  std::string collective;
  int64_t bytes = 0;  // nccl-tests' size, rounded to whole floats per rank
};

// The trace (ET JSON, schema 1.0.2: record_param_comms with positional
// arguments) of the grid's collectives for `group_size` ranks, tensors on
// `device` ("cpu", "cuda:0"). Every collective reads a view of one storage,
// so that the replay runs them one at a time (an asynchronous Gloo
// collective is waited for by the next op that touches its storage).
std::string commSweepTrace(const CommGrid& grid, int group_size, const std::string& device,
                           std::vector<CommSweepCase>* cases);

// The samples in the merged report of `replay --nproc` of that trace: per
// case and rank, the mean transfer over the iterations (last arrival to own
// completion; the median in reports from before the means). The mean, since a
// model predicts a step's expected time: on a shared CPU host Gloo loses a
// scheduler tick in a share of its collectives, which a median drops or keeps
// whole depending on whether that share is under or over half.
// Throws InputError naming the case when the report lacks it.
std::vector<predictors::CommSample> commSamplesFromReport(const nlohmann::json& merged,
                                                          const std::vector<CommSweepCase>& cases,
                                                          int group_size);

// The ranks' arrival jitter a sweep with a spacer shows
// (predictors/comm/sync_jitter.h): each measured collective followed a
// spacer `spacer_us` long on every rank, and a rank waited `mean_wait_us`
// for the others on average.
struct CommJitterSample {
  int group_size = 0;
  double mean_wait_us = 0;  // over the ranks and the measured collectives
  double spacer_us = 0;     // the spacer mm's mean time (on the device where it ran)
  double variance_per_us = 0;
};

// Throws InputError when the report has no spacer (no gemm family) or no
// wait for the cases.
CommJitterSample commJitterFromReport(const nlohmann::json& merged,
                                      const std::vector<CommSweepCase>& cases, int group_size);

}  // namespace tracetwin::calibration
