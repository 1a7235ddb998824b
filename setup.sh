#!/usr/bin/env bash
# Installs what tilesim needs (Debian/Ubuntu packages) and builds it into build/.
# CUDA (nvcc, CUPTI) is optional: without it the kernels and the measurement harness are skipped.
set -euo pipefail
cd "$(dirname "$0")"
packages=(build-essential cmake libboost-program-options-dev libboost-graph-dev nlohmann-json3-dev catch2 qt6-base-dev
  clang libclang-rt-14-dev) # clang and its libFuzzer runtime: the fuzz targets (tests/fuzz/)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[[ -d /usr/local/cuda/bin ]] && export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
