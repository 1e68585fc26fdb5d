// Stand-in when LibTorch has no CUDA (Debian's CPU build): compiled kernels
// cannot be launched on LibTorch's streams.
#include "core/errors.h"
#include "replay/compiled/torch_cuda_stream.h"

namespace tracetwin::replay::compiled {

bool torchHasCudaStreams() { return false; }

void* currentTorchCudaStream(int device) {
  throw UnavailableError("compiled kernels on cuda:" + std::to_string(device) +
                         ": this LibTorch was built without CUDA (no c10_cuda); build tracetwin "
                         "against a CUDA LibTorch (docs/gpu.md)");
}

}  // namespace tracetwin::replay::compiled
