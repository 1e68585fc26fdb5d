// Operator libraries loaded into the replaying process: shared objects that
// register operators with the dispatcher when loaded (TORCH_LIBRARY), such as
// fbgemm_gpu's TorchRec kernels or a model's own extension ops. PyTorch's
// torch.ops.load_library does the same for Python; a trace that used such ops
// replays them only where their library is loaded.
#pragma once

#include <string>
#include <vector>

namespace tracetwin::replay {

// Loads each library once per process (later calls with the same path do
// nothing) and keeps it loaded: its operators stay registered. Throws
// InputError naming the file and the loader's reason.
void loadOpLibraries(const std::vector<std::string>& paths);

}  // namespace tracetwin::replay
