#!/usr/bin/env bash
# Device-machine benchmark: our kernel's sweep, then the torch baselines, merged into one JSON.
# Usage (repository root): kernels/run_device_bench.sh BENCH_BINARY OUT_DIR [bench args...]
set -euo pipefail
bench=$1 out=$2
shift 2
"$bench" --out "$out/bench_ours.json" "$@" | tee "$out/bench_ours.log"
PYTHONUNBUFFERED=1 python3 kernels/bench_baselines.py --ours "$out/bench_ours.json" \
  --out "$out/bench_grouped_gemm.json" --command "kernels/run_device_bench.sh $bench \$OUT $*"
