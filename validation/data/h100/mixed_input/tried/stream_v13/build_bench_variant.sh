#!/usr/bin/env bash
# build_bench_variant.sh REPO BUILD_DIR VARIANT OUT_BIN: mixed_input_bench with an ablated kernel
# (tried/ablation_v10/make_ablation.py), compiled against a copy of the sources, linked with
# BUILD_DIR's libraries. Timing experiments only: the ablated kernels' outputs are wrong.
set -eu
repo="$1" build="$2" variant="$3" out="$4"
tmp="$(mktemp -d)"
mkdir -p "$tmp/kernels"
cp -r "$repo/kernels/common" "$repo/kernels/mixed_input" "$repo/kernels/grouped_gemm" "$tmp/kernels/"
ln -s "$repo/models" "$tmp/models"
python3 "$repo/validation/data/h100/mixed_input/tried/ablation_v10/make_ablation.py" \
  "$repo/kernels/mixed_input/mixed_input_kernel.cuh" "$tmp/kernels/mixed_input/mixed_input_kernel.cuh" "$variant"
nv="nvcc -I$tmp -isystem=/usr/local/cuda/include -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -std=c++20"
$nv -c "$tmp/kernels/mixed_input/mixed_input_gemm.cu" -o "$tmp/gemm.o"
$nv -c "$tmp/kernels/mixed_input/mixed_input_bench.cu" -o "$tmp/bench.o"
c++ -O3 "$tmp/bench.o" "$tmp/gemm.o" -o "$out" -L/usr/local/cuda/targets/x86_64-linux/lib \
  "$build/kernels/grouped_gemm/libtilesim_kernels.a" "$build/kernels/common/libtilesim_kernels_common.a" \
  "$build/models/libtilesim_models.a" -lcublas -lcudadevrt -lcudart_static -lrt -lpthread -ldl
rm -rf "$tmp"
echo "built $out ($variant)"
