# replay/comm: communication replay through LibTorch's c10d.
# Included by replay/CMakeLists.txt: the spec into tracetwin_replay_portable,
# the rest into tracetwin_replay. Sets:
#   TRACETWIN_REPLAY_COMM_SPEC_SOURCES  torch-free collective parsing
#   TRACETWIN_REPLAY_COMM_SOURCES       everything (spec + c10d replay; needs LibTorch)
#   TRACETWIN_REPLAY_COMM_LIBS          libraries they link
#   TRACETWIN_REPLAY_COMM_DEFINITIONS   compile definitions
#   TRACETWIN_REPLAY_COMM_INCLUDES      extra include directories (nccl.h)
# Gloo (CPU) is compiled when its headers are found beside LibTorch's
# (Debian: libgloo-dev); NCCL (CUDA) when LibTorch itself has CUDA
# (TorchConfig found c10_cuda) and NCCL was found. Without them
# CommReplayer::create throws UnavailableError saying which is missing.
set(_tt_comm ${CMAKE_CURRENT_LIST_DIR})
set(TRACETWIN_REPLAY_COMM_SPEC_SOURCES ${_tt_comm}/collective_spec.cpp ${_tt_comm}/group_plan.cpp)
set(TRACETWIN_REPLAY_COMM_SOURCES ${TRACETWIN_REPLAY_COMM_SPEC_SOURCES})
set(TRACETWIN_REPLAY_COMM_LIBS "")
set(TRACETWIN_REPLAY_COMM_DEFINITIONS "")
set(TRACETWIN_REPLAY_COMM_INCLUDES "")

if(TRACETWIN_HAVE_TORCH)
  list(APPEND TRACETWIN_REPLAY_COMM_SOURCES
    ${_tt_comm}/process_group.cpp
    ${_tt_comm}/collective_runners.cpp
    ${_tt_comm}/comm_replayer.cpp)
  list(APPEND TRACETWIN_REPLAY_COMM_LIBS ${TORCH_LIBRARIES})

  find_path(TRACETWIN_GLOO_INCLUDE gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS})
  if(TRACETWIN_GLOO_INCLUDE)
    # ProcessGroupGloo.hpp is empty unless USE_C10D_GLOO is defined.
    list(APPEND TRACETWIN_REPLAY_COMM_DEFINITIONS USE_C10D_GLOO TRACETWIN_HAVE_GLOO=1)
  else()
    message(STATUS "tracetwin: no Gloo headers (gloo/algorithm.h): CPU communication replay "
                   "is compiled out; install libgloo-dev to enable it")
  endif()

  if(C10_CUDA_LIBRARY AND TRACETWIN_HAVE_NCCL)
    list(APPEND TRACETWIN_REPLAY_COMM_DEFINITIONS USE_C10D_NCCL TRACETWIN_TORCH_HAS_NCCL=1)
    list(APPEND TRACETWIN_REPLAY_COMM_LIBS ${TRACETWIN_NCCL_LIBRARY})
    list(APPEND TRACETWIN_REPLAY_COMM_INCLUDES ${TRACETWIN_NCCL_INCLUDE})
  endif()
endif()
unset(_tt_comm)
