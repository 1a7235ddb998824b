#!/usr/bin/env bash
# Device-machine benchmark: our kernel's sweep, then ours against the torch baselines, interleaved.
# Usage (repository root): kernels/grouped_gemm/run_device_bench.sh BIN_DIR OUT_DIR [grouped_gemm_bench args...]
# BIN_DIR holds grouped_gemm_bench and libtilesim_grouped_gemm_capi.so.
set -euo pipefail
bin=$1 out=$2
shift 2
"$bin/grouped_gemm_bench" --out "$out/bench_ours.json" "$@" | tee "$out/bench_ours.log"
PYTHONUNBUFFERED=1 python3 kernels/grouped_gemm/bench_baselines.py --ours "$out/bench_ours.json" \
  --lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$out/bench_grouped_gemm.json" \
  --command "kernels/grouped_gemm/run_device_bench.sh $bin \$OUT $*"
