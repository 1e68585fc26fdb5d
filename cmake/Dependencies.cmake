# Every third-party dependency is found here, once. Required ones fail early
# with the package that provides them; optional ones set TRACETWIN_HAVE_*.

macro(tracetwin_require pkg debian)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "${pkg} was not found. Install the Debian package '${debian}' "
                        "(scripts/install-deps.sh does it), or point CMAKE_PREFIX_PATH at it.")
  endif()
endmacro()

tracetwin_require(simdjson libsimdjson-dev)     # fast ET / Kineto JSON parsing
tracetwin_require(nlohmann_json nlohmann-json3-dev)  # writing JSON reports
tracetwin_require(fmt libfmt-dev)
tracetwin_require(CLI11 libcli11-dev)
tracetwin_require(yaml-cpp libyaml-cpp-dev)
tracetwin_require(Eigen3 libeigen3-dev)
tracetwin_require(xgboost libxgboost-dev)
# Chakra ETs (core/chakra): the protobuf library and protoc to compile the schema.
tracetwin_require(Protobuf "libprotobuf-dev' and 'protobuf-compiler")
if(NOT Protobuf_PROTOC_EXECUTABLE)
  message(FATAL_ERROR "protoc was not found. Install the Debian package 'protobuf-compiler' "
                      "(scripts/install-deps.sh does it).")
endif()
find_package(Threads REQUIRED)

# libdeflate ships only a pkg-config file on Debian 12.
find_package(PkgConfig REQUIRED)
# zlib streams gzip traces while they are parsed (libdeflate, faster, only
# decompresses whole buffers: Kineto traces and tests use it).
find_package(ZLIB)
if(NOT ZLIB_FOUND)
  message(FATAL_ERROR "zlib was not found. Install the Debian package 'zlib1g-dev'.")
endif()
pkg_check_modules(LIBDEFLATE IMPORTED_TARGET libdeflate)
if(NOT LIBDEFLATE_FOUND)
  message(FATAL_ERROR "libdeflate was not found. Install the Debian package 'libdeflate-dev'.")
endif()

# yaml-cpp 0.7 (Debian 12) exports a target without namespace.
if(TARGET yaml-cpp AND NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()

# --- LibTorch: Debian's libtorch-dev, or a pip PyTorch via CMAKE_PREFIX_PATH
# (python3 -c 'import torch; print(torch.utils.cmake_prefix_path)').
set(TRACETWIN_HAVE_TORCH OFF)
if(TRACETWIN_WITH_TORCH)
  find_package(Torch QUIET)
  if(NOT Torch_FOUND)
    message(FATAL_ERROR "TRACETWIN_WITH_TORCH=ON but LibTorch was not found. Install Debian's "
                        "'libtorch-dev', or add a pip PyTorch's torch.utils.cmake_prefix_path to "
                        "CMAKE_PREFIX_PATH, or configure with -DTRACETWIN_WITH_TORCH=OFF "
                        "(inspect and predict only).")
  endif()
  set(TRACETWIN_HAVE_TORCH ON)
  # pip LibTorch >= 2.5 exports copies of libstdc++ symbols it links
  # statically, std::filesystem's among them (pytorch/pytorch#133437). A
  # program that lists libtorch before libstdc++ among its needed libraries
  # binds calls such as std::filesystem::remove_all to those copies, which
  # jump to address 0. Naming the shared libstdc++ first (by file name: a
  # plain -lstdc++ there may pick the static archive, which adds no entry)
  # makes the dynamic linker find libstdc++'s own definitions first.
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    add_link_options("LINKER:--push-state,--no-as-needed,-l:libstdc++.so.6,--pop-state")
  endif()
endif()

# --- CUDA toolkit, CUPTI, NCCL: on when found (AUTO), required when ON.
set(TRACETWIN_HAVE_CUDA OFF)
set(TRACETWIN_HAVE_CUPTI OFF)
set(TRACETWIN_HAVE_NCCL OFF)
if(NOT TRACETWIN_CUDA STREQUAL "OFF" AND TRACETWIN_HAVE_TORCH)
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(TRACETWIN_HAVE_CUDA ON)
    if(TARGET CUDA::cupti)
      set(TRACETWIN_HAVE_CUPTI ON)
    endif()
    find_library(TRACETWIN_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(TRACETWIN_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(TRACETWIN_NCCL_LIBRARY AND TRACETWIN_NCCL_INCLUDE)
      set(TRACETWIN_HAVE_NCCL ON)
    endif()
  endif()
  if(TRACETWIN_CUDA STREQUAL "ON" AND NOT (TRACETWIN_HAVE_CUDA AND TRACETWIN_HAVE_CUPTI))
    message(FATAL_ERROR "TRACETWIN_CUDA=ON but the CUDA toolkit with CUPTI was not found. "
                        "Install the CUDA Toolkit with CUPTI, set CUDAToolkit_ROOT, or set "
                        "TRACETWIN_CUDA=AUTO/OFF.")
  endif()
endif()
