#!/usr/bin/env bash
# build_variant.sh REPO BUILD_DIR VARIANT OUT_BIN: mixed_input_block_rate with an ablated kernel
# (make_ablation.py), compiled against a copy of the sources, linked with BUILD_DIR's libraries.
set -eu
repo="$1" build="$2" variant="$3" out="$4"
tmp="$(mktemp -d)"
mkdir -p "$tmp/kernels"
cp -r "$repo/kernels/common" "$repo/kernels/mixed_input" "$tmp/kernels/"
ln -s "$repo/models" "$tmp/models"
if [ "$variant" = head ]; then # the kernel before v10 (its header as of 35c8285, unchanged until 77cdd9b)
  git -C "$repo" show 35c8285:kernels/mixed_input/mixed_input_kernel.cuh >"$tmp/kernels/mixed_input/mixed_input_kernel.cuh"
else
  python3 "$(dirname "$0")/make_ablation.py" "$repo/kernels/mixed_input/mixed_input_kernel.cuh" \
    "$tmp/kernels/mixed_input/mixed_input_kernel.cuh" "$variant"
fi
nv="nvcc -I$tmp -isystem=/usr/local/cuda/include -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -std=c++20"
$nv -c "$tmp/kernels/mixed_input/mixed_input_gemm.cu" -o "$tmp/gemm.o"
$nv -c "$tmp/kernels/mixed_input/mixed_input_block_rate.cu" -o "$tmp/rate.o"
c++ -O3 "$tmp/rate.o" "$tmp/gemm.o" -o "$out" -L/usr/local/cuda/targets/x86_64-linux/lib \
  "$build/kernels/common/libtilesim_kernels_common.a" "$build/models/libtilesim_models.a" \
  -lcudadevrt -lcudart_static -lrt -lpthread -ldl
rm -rf "$tmp"
echo "built $out ($variant)"
