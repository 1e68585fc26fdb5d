// The CUDA stream LibTorch has current on a device, as a cudaStream_t. Its
// one implementation needs c10_cuda (torch_cuda_stream.cpp, compiled when
// LibTorch has CUDA); otherwise torch_cuda_stream_unavailable.cpp throws
// UnavailableError saying so.
#pragma once

namespace tracetwin::replay::compiled {

bool torchHasCudaStreams();
void* currentTorchCudaStream(int device);

}  // namespace tracetwin::replay::compiled
