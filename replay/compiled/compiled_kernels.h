// Mode 1 of compiled-step replay, before the first op runs: for each Triton
// node, its kernel found in Inductor's cache, loaded on the device, and the
// node's values bound to its parameters. A node that cannot get there gets
// the reason, and the replay stands in for it (modes 2 and 3, replayer.cpp).
// Torch-free: the cache, the layout and the device are all behind seams.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/graph.h"
#include "replay/compiled/inductor_cache.h"
#include "replay/compiled/kernel_device.h"
#include "replay/compiled/launch_layout.h"

namespace tracetwin::replay::compiled {

struct PreparedLaunch {
  KernelHandle kernel = nullptr;
  LaunchPlan plan;
  std::string found_by;  // "manifest" or "source+best_config"
};

using KernelDeviceFactory = std::function<std::unique_ptr<KernelDevice>()>;

class CompiledKernels {
 public:
  // `cache` may be null (none given). `make_device` is called once, on first
  // need; an UnavailableError from it becomes every kernel's reason (and
  // stand-ins then wait on the host).
  CompiledKernels(std::shared_ptr<const InductorCache> cache, KernelDeviceFactory make_device);

  // The launch of `node`'s kernel, or nullopt with `why`.
  std::optional<PreparedLaunch> prepare(const core::Node& node, std::string* why);

  // The device, created on first call; null when there is none (deviceError says why).
  KernelDevice* device();
  const std::string& deviceError() const { return device_error_; }

 private:
  std::shared_ptr<const InductorCache> cache_;
  KernelDeviceFactory make_device_;
  std::unique_ptr<KernelDevice> device_;
  bool device_tried_ = false;
  std::string device_error_;
};

}  // namespace tracetwin::replay::compiled
