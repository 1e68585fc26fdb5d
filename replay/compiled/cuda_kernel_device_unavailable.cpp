// Stand-in without the CUDA toolkit (TRACETWIN_HAVE_CUDA=OFF).
#include "core/errors.h"
#include "replay/compiled/kernel_device.h"

namespace tracetwin::replay::compiled {

std::unique_ptr<KernelDevice> makeCudaKernelDevice(int index) {
  throw UnavailableError(
      "compiled kernels on cuda:" + std::to_string(index) +
      ": tracetwin was built without the CUDA toolkit "
      "(TRACETWIN_HAVE_CUDA=OFF); rebuild with -DTRACETWIN_CUDA=ON (docs/gpu.md)");
}

}  // namespace tracetwin::replay::compiled
