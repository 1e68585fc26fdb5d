# replay/compiled: torch.compile steps - Inductor's cache read, Triton
# kernels bound to a trace's values, and launched from C++ (mode 1), or
# stood in for by device-side waits (modes 2 and 3). Included by
# replay/CMakeLists.txt and tests/replay. Sets:
#   TRACETWIN_REPLAY_COMPILED_SOURCES  sources to compile (torch-free but for
#                                      torch_cuda_stream.cpp)
# The driver-API device needs the CUDA toolkit (else a stand-in throws
# UnavailableError); the stream it launches on needs a CUDA LibTorch
# (TorchConfig found c10_cuda), else its stand-in says so.
set(_tt_cmp ${CMAKE_CURRENT_LIST_DIR})
set(TRACETWIN_REPLAY_COMPILED_SOURCES
  ${_tt_cmp}/inductor_source.cpp
  ${_tt_cmp}/inductor_cache.cpp
  ${_tt_cmp}/launch_layout.cpp
  ${_tt_cmp}/compiled_kernels.cpp)
if(TRACETWIN_HAVE_CUDA)
  list(APPEND TRACETWIN_REPLAY_COMPILED_SOURCES ${_tt_cmp}/cuda_kernel_device.cpp)
else()
  list(APPEND TRACETWIN_REPLAY_COMPILED_SOURCES ${_tt_cmp}/cuda_kernel_device_unavailable.cpp)
endif()
if(TRACETWIN_HAVE_TORCH AND TRACETWIN_HAVE_CUDA AND C10_CUDA_LIBRARY)
  list(APPEND TRACETWIN_REPLAY_COMPILED_SOURCES ${_tt_cmp}/torch_cuda_stream.cpp)
else()
  list(APPEND TRACETWIN_REPLAY_COMPILED_SOURCES ${_tt_cmp}/torch_cuda_stream_unavailable.cpp)
endif()
unset(_tt_cmp)
