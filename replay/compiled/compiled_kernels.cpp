#include "replay/compiled/compiled_kernels.h"

#include <fmt/core.h>

#include "core/errors.h"

namespace tracetwin::replay::compiled {

CompiledKernels::CompiledKernels(std::shared_ptr<const InductorCache> cache,
                                 KernelDeviceFactory make_device)
    : cache_(std::move(cache)), make_device_(std::move(make_device)) {}

KernelDevice* CompiledKernels::device() {
  if (!device_tried_) {
    device_tried_ = true;
    if (!make_device_) {
      device_error_ = "no device to launch compiled kernels on";
    } else {
      try {
        device_ = make_device_();
      } catch (const UnavailableError& e) {
        device_error_ = e.what();
      }
    }
  }
  return device_.get();
}

std::optional<PreparedLaunch> CompiledKernels::prepare(const core::Node& node, std::string* why) {
  if (!cache_) {
    *why = "no Inductor cache given (replay --inductor-cache DIR launches its kernels)";
    return std::nullopt;
  }
  std::optional<CompiledKernelSpec> spec = cache_->find(node.name, node.kernel_file, why);
  if (!spec) return std::nullopt;
  PreparedLaunch launch;
  launch.found_by = spec->found_by;
  try {
    launch.plan = planLaunch(*spec, node);
  } catch (const LayoutError& e) {
    *why = e.what();
    return std::nullopt;
  }
  KernelDevice* dev = device();
  if (dev == nullptr) {
    *why = device_error_;
    return std::nullopt;
  }
  try {
    launch.kernel = dev->load(spec->binary);
  } catch (const Error& e) {  // the driver refused it, or the file went away
    *why = e.what();
    return std::nullopt;
  }
  return launch;
}

}  // namespace tracetwin::replay::compiled
