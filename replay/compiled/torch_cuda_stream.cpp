// Compiled only when LibTorch has CUDA (TorchConfig found c10_cuda).
#include "replay/compiled/torch_cuda_stream.h"

#include <c10/cuda/CUDAStream.h>

namespace tracetwin::replay::compiled {

bool torchHasCudaStreams() { return true; }

void* currentTorchCudaStream(int device) {
  return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
}

}  // namespace tracetwin::replay::compiled
