# replay/device: device timers, CUDA discovery and CUPTI kernel collection.
# Included by replay/CMakeLists.txt (into tracetwin_replay_device) and by
# tests/replay_device (its stand-ins). Sets:
#   TRACETWIN_REPLAY_DEVICE_SOURCES      sources to compile (torch-free)
#   TRACETWIN_REPLAY_DEVICE_LIBS         libraries they link
#   TRACETWIN_REPLAY_DEVICE_DEFINITIONS  compile definitions
# Without the CUDA toolkit / CUPTI the *_unavailable.cpp stand-ins are
# compiled instead: every entry point then throws UnavailableError saying so.
set(_tt_dev ${CMAKE_CURRENT_LIST_DIR})
set(TRACETWIN_REPLAY_DEVICE_SOURCES
  ${_tt_dev}/kernel_attribution.cpp
  ${_tt_dev}/device_timer.cpp)
set(TRACETWIN_REPLAY_DEVICE_LIBS "")
set(TRACETWIN_REPLAY_DEVICE_DEFINITIONS "")

if(TRACETWIN_HAVE_CUDA)
  list(APPEND TRACETWIN_REPLAY_DEVICE_SOURCES ${_tt_dev}/cuda_device.cpp)
  list(APPEND TRACETWIN_REPLAY_DEVICE_LIBS CUDA::cudart)
  list(APPEND TRACETWIN_REPLAY_DEVICE_DEFINITIONS TRACETWIN_HAVE_CUDA=1)
else()
  list(APPEND TRACETWIN_REPLAY_DEVICE_SOURCES ${_tt_dev}/cuda_device_unavailable.cpp)
endif()

if(TRACETWIN_HAVE_CUDA AND TRACETWIN_HAVE_CUPTI)
  list(APPEND TRACETWIN_REPLAY_DEVICE_SOURCES
    ${_tt_dev}/cupti_activity_buffers.cpp
    ${_tt_dev}/cupti_collector.cpp)
  list(APPEND TRACETWIN_REPLAY_DEVICE_LIBS CUDA::cupti)
  list(APPEND TRACETWIN_REPLAY_DEVICE_DEFINITIONS TRACETWIN_HAVE_CUPTI=1)
else()
  list(APPEND TRACETWIN_REPLAY_DEVICE_SOURCES ${_tt_dev}/cupti_collector_unavailable.cpp)
endif()
unset(_tt_dev)
