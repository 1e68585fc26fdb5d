#!/usr/bin/env bash
# Carries tracetwin's Debian build dependencies to a GPU host that has no
# package registry (only a CUDA PyTorch), as a private prefix.
#
#   here:  scripts/gpu-prefix.sh download [DEB_DIR]            (default .gpu-debs)
#   there: scripts/gpu-prefix.sh unpack [DEB_DIR] [PREFIX]     (default /tmp/tt-prefix)
#
# `download` fetches the .deb files with `apt-get download` (no root, nothing
# installed) and writes SHA256SUMS. `unpack` checks the sums, extracts every
# .deb into PREFIX (dpkg-deb, or ar+tar where dpkg is missing), points the
# pkg-config files at PREFIX and prints the cmake command. See docs/gpu.md.
set -euo pipefail

# Libraries tracetwin links that a CUDA PyTorch host lacks, with their
# runtime packages (apt-get download does not follow dependencies). libc,
# libstdc++ and libgomp are left to the host. The xgboost CLI is needed only
# because Debian's XGBoostTargets.cmake refuses to load without /usr/bin/xgboost.
# No gloo: a pip PyTorch carries its own, and Debian's headers would not match it.
PACKAGES=(
  libsimdjson-dev libsimdjson14
  libfmt-dev libfmt9
  libcli11-dev
  nlohmann-json3-dev
  libyaml-cpp-dev libyaml-cpp0.7
  libeigen3-dev
  libxgboost-dev libxgboost0 libdmlc0 xgboost
  libdeflate-dev libdeflate0
  zlib1g-dev
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler libprotoc32  # Chakra ETs
  libgtest-dev libgmock-dev googletest
  libbenchmark-dev libbenchmark1debian
)

usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

download() {
  local dir=$1
  command -v apt-get >/dev/null || { echo "gpu-prefix: apt-get not found: run 'download' on the Debian build host" >&2; exit 1; }
  mkdir -p "$dir"
  (cd "$dir" && apt-get download "${PACKAGES[@]}")
  (cd "$dir" && sha256sum ./*.deb > SHA256SUMS)
  echo "gpu-prefix: $(ls "$dir"/*.deb | wc -l) packages, $(du -sh "$dir" | cut -f1) in $dir"
  echo "gpu-prefix: copy $dir to the GPU host, then run: scripts/gpu-prefix.sh unpack $dir"
}

extract_deb() {
  local deb=$1 prefix=$2
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$deb" "$prefix"
    return
  fi
  local member
  member=$(ar t "$deb" | grep '^data\.tar')
  case "$member" in
    *.xz) ar p "$deb" "$member" | tar -xJ -C "$prefix" ;;
    *.zst) ar p "$deb" "$member" | zstd -dc | tar -x -C "$prefix" ;;
    *.gz) ar p "$deb" "$member" | tar -xz -C "$prefix" ;;
    *) echo "gpu-prefix: $deb: unknown payload '$member'" >&2; exit 1 ;;
  esac
}

unpack() {
  local dir=$1 prefix=$2
  [ -f "$dir/SHA256SUMS" ] || { echo "gpu-prefix: $dir/SHA256SUMS missing: run 'download' first" >&2; exit 1; }
  (cd "$dir" && sha256sum --quiet -c SHA256SUMS)
  mkdir -p "$prefix"
  local deb
  for deb in "$dir"/*.deb; do extract_deb "$deb" "$prefix"; done
  # pkg-config files name /usr (libdeflate is found through them). Debian's
  # libdeflate.pc even writes includedir=/usr/include and libdir=/usr/lib
  # outright, the latter not where the library is: point all at PREFIX.
  local libdir=$prefix/usr/lib/x86_64-linux-gnu
  local pc
  for pc in $(find "$prefix/usr" -name '*.pc'); do
    sed -i -E -e "s#^libdir=/usr/lib\$#libdir=$libdir#" \
              -e "s#^([A-Za-z_]+)=/usr(/|\$)#\1=$prefix/usr\2#" "$pc"
  done
  local torch_path
  torch_path=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || echo "<torch.utils.cmake_prefix_path>")
  echo "gpu-prefix: unpacked $(ls "$dir"/*.deb | wc -l) packages into $prefix"
  echo "gpu-prefix: configure and build with:"
  cat <<CMD
export PKG_CONFIG_PATH="$libdir/pkgconfig:$prefix/usr/share/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \\
  -DCMAKE_PREFIX_PATH="$prefix/usr;$torch_path" \\
  -DTRACETWIN_CUDA=ON
cmake --build build-gpu -j\$(nproc)
ctest --test-dir build-gpu -L replay_device --output-on-failure
CMD
}

mode=${1:-}
case "$mode" in
  download) download "${2:-.gpu-debs}" ;;
  unpack) unpack "${2:-.gpu-debs}" "${3:-/tmp/tt-prefix}" ;;
  *) usage ;;
esac
