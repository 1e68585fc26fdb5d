// Collectives by the alpha-beta model (DESIGN.md "Kernel models"):
//   ring all-reduce                        2(p-1) a + 2(p-1)/p n b
//   all-gather / reduce-scatter / all-to-all (p-1) a + (p-1)/p n b
//   broadcast / reduce (pipelined ring)      (p-1) a + n b
// a: per-step latency (s), b: seconds per byte, n: message bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "predictors/comm/sync_jitter.h"
#include "predictors/kernels/kernel_model.h"

namespace tracetwin::predictors {

// Canonical name: "allreduce", "_allgather_base", "all_gather_into_tensor" ->
// "all_reduce" / "all_gather"; unknown names map to themselves.
std::string canonicalCollective(const std::string& name);

struct AlphaBetaTerms {
  double latency_steps = 0;  // multiplies alpha
  double byte_factor = 0;    // multiplies n * beta
};
AlphaBetaTerms alphaBetaTerms(const std::string& collective, int64_t world_size);

// nccl-tests bus bandwidth factor: all-reduce 2(p-1)/p; all-gather,
// reduce-scatter, all-to-all (p-1)/p; broadcast, reduce 1.
double busBandwidthFactor(const std::string& collective, int64_t world_size);
// busbw = bytes / time * factor (bytes/s).
double busBandwidth(const std::string& collective, int64_t world_size, double bytes,
                    double seconds);

class AlphaBetaModel : public KernelModel {
 public:
  struct Params {
    double alpha_s = 5e-6;
    double beta_s_per_byte = 1.0 / 100e9;
  };
  // Parameters over a range of message sizes: a collective changes
  // algorithm with the size (NCCL's tree below some size and ring above,
  // Gloo's own switches), so one (alpha, beta) per regime.
  static constexpr double kAnySize = 1e300;  // the last regime's bound (JSON has no infinity)
  struct Regime {
    double up_to_bytes = kAnySize;  // messages of at most this many bytes
    Params params;
  };
  std::map<std::string, Params> per_collective;  // canonical name -> fitted
  // canonical name -> regimes by ascending size; takes precedence over
  // per_collective (which then holds the largest regime, for older readers).
  std::map<std::string, std::vector<Regime>> regimes;
  Params fallback;                               // from the device's link
  // How ranks' arrivals at collectives vary on the host the sweep measured
  // (empty: arrivals as predicted, no jitter).
  SyncJitter sync_jitter;
  // The parameters for `collective` (canonical) at `bytes`.
  const Params& paramsFor(const std::string& collective, double bytes) const;
  std::string kind() const override { return "alpha_beta"; }
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;
  static std::shared_ptr<const KernelModel> fromJson(const nlohmann::json& j,
                                                     const std::string& dir);
  // alpha = latency, beta = 1 / bandwidth of `link` (fastest link when empty;
  // PCIe 4.0 x16, 25 GB/s and 5 us, when the device lists none).
  static std::shared_ptr<AlphaBetaModel> fromDevice(const DeviceSpec& d,
                                                    const std::string& link = "");
};

}  // namespace tracetwin::predictors
