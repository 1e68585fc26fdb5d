#include "cli/replay_options.h"

#include "cli/number_checks.h"

namespace tracetwin::cli {

void addReplayLoopOptions(CLI::App& sub, replay::ReplayOptions& options) {
  sub.add_option("--device", options.device, "cpu, cuda or cuda:N (recorded devices are mapped)")
      ->capture_default_str();
  sub.add_option("--warmup", options.warmup_iters, "warm-up iterations (not measured)")
      ->capture_default_str()
      ->check(wholeNumberFor<int>(0));
  sub.add_option("--iters", options.measured_iters, "measured iterations")
      ->capture_default_str()
      ->check(wholeNumberFor<int>(1));
  sub.add_option("--settle", options.settle_iters,
                 "untimed iterations after each refill of the upfront values, before a measured "
                 "one (0: time the iteration right after the refill)")
      ->capture_default_str()
      ->check(wholeNumberFor<int>(0));
  sub.add_option("--threads", options.threads,
                 "intra-op threads (default: the trace's meta file, else LibTorch's default)")
      ->check(wholeNumber(0, 1024));  // 100000 threads ran past any timeout
  sub.add_option("--op-library", options.op_libraries,
                 "a shared library that registers operators the trace uses (fbgemm_gpu, "
                 "TorchRec, a model's extension ops), loaded before the replay; repeatable")
      ->check(CLI::ExistingFile);
}

}  // namespace tracetwin::cli
