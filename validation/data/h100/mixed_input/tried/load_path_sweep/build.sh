#!/usr/bin/env bash
# build.sh REPO OUT_BIN: the load-path sweep (CUDA 13.0, sm_90a), cuBLAS for the interleaved baseline.
set -eu
repo="$1" out="$2"
nvcc -I"$repo" -isystem=/usr/local/cuda/include -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -std=c++20 \
  "$repo/validation/data/h100/mixed_input/tried/load_path_sweep/load_path_sweep.cu" -o "$out" \
  -L/usr/local/cuda/targets/x86_64-linux/lib -lcublas
echo "built $out"
