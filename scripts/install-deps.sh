#!/usr/bin/env bash
# Installs the Debian packages tracetwin builds against, only those missing.
# Used by `make build|demo|test`; safe to run again (prints nothing to do).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  ccache  # the Makefile's compiler cache: a fresh clone reuses earlier builds' objects
  libtorch-dev python3-torch python3-torchvision  # LibTorch for replay; torch to capture traces
  libgloo-dev  # headers ProcessGroupGloo.hpp needs (comm replay on CPU)
  libeigen3-dev libyaml-cpp-dev libxgboost-dev
  xgboost  # its CLI /usr/bin/xgboost: XGBoostTargets.cmake fails configure without it
  libsimdjson-dev nlohmann-json3-dev libcli11-dev libfmt-dev libdeflate-dev
  zlib1g-dev  # gzip traces are decompressed while they are parsed
  libprotobuf-dev protobuf-compiler  # Chakra protobuf ETs (core/chakra/et_def.proto)
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev  # libFuzzer and sanitizer runtimes
  time  # /usr/bin/time -v: peak RSS in scripts/measure-reader-memory.sh
  valgrind bc  # instruction counts in scripts/predict-instructions.sh (this host's timings drift)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
