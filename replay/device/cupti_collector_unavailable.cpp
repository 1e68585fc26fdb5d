// Stand-in for cupti_collector.cpp when tracetwin is built without CUPTI.
#include "core/errors.h"
#include "replay/device/kernel_collector.h"

namespace tracetwin::replay::device {

bool cuptiCompiledIn() { return false; }

std::unique_ptr<KernelCollector> makeCuptiCollector(int /*device*/) {
  throw UnavailableError(
      "CUPTI kernel timing is unavailable: tracetwin was not compiled with CUPTI "
      "(TRACETWIN_HAVE_CUPTI=OFF); install the CUDA toolkit with CUPTI and rebuild "
      "(docs/gpu.md), or replay with --no-cupti for CUDA-event iteration times only");
}

}  // namespace tracetwin::replay::device
