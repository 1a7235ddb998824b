#!/usr/bin/env bash
# Issue 20's GEMM device session (H100), one call: compute-sanitizer memcheck once on the MXFP8
# GEMM, its full check, its SASS and resources, and the benchmark against our bf16 grouped GEMM and
# torch._scaled_mm (bench_gemm.py).
#
#   kernels/mxfp8/run_device_gemm.sh BIN_DIR OUT_DIR [bench_gemm.py options...]
#
# BIN_DIR holds mxfp8_gemm_check, libtilesim_mxfp8_capi.so and libtilesim_grouped_gemm_capi.so.
# Writes OUT_DIR/gemm_checks.log, sass_gemm.txt and bench_gemm.json.
set -u -o pipefail
bin="$(cd "${1:?usage: run_device_gemm.sh BIN_DIR OUT_DIR [bench options]}" && pwd)"
out="${2:?usage: run_device_gemm.sh BIN_DIR OUT_DIR [bench options]}"
shift 2
mkdir -p "$out"
# BIN_DIR last: a CUDA 13 runtime carried there is used only where the machine has none.
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== mxfp8_gemm_check --quick (the rest only if it passes)"
  timeout 60 "$bin/mxfp8_gemm_check" --quick || exit 1
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 6
  echo "== mxfp8_gemm_check (full)"
  timeout 150 "$bin/mxfp8_gemm_check"
  echo "== SASS instruction counts and resources"
  if command -v cuobjdump > /dev/null; then
    cuobjdump -sass "$bin/mxfp8_gemm_check" | awk '/Function :/ {name=$3} /^ +\/\*[0-9a-f]+\*\// {split($2, op, "."); if (name ~ /mxfp8_gemm/) count[op[1]]++} END {for (o in count) print count[o], o}' |
      sort -rn | head -30 | tee "$out/sass_gemm.txt"
    cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 mxfp8_gemm | tee -a "$out/sass_gemm.txt"
  else
    echo "no cuobjdump"
  fi
  echo "== benchmark"
  PYTHONUNBUFFERED=1 timeout 300 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$out/bench_gemm.json" "$@"
  date -u
} 2>&1 | tee "$out/gemm_checks.log"
