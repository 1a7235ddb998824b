#!/usr/bin/env bash
# Issue 20, the 128 x 128 transposed tile with converter warpgroups (kernels/mxfp8/NOTES.md, "Converter
# warpgroups"): the H100 device call that checked and measured it. From the repository root, with the
# binaries built here carried in BIN_DIR (mxfp8_gemm_check, mxfp8_stage_rate, libtilesim_mxfp8_capi.so,
# libtilesim_grouped_gemm_capi.so):
#   validation/data/h100/mxfp8/converters/device_call.sh BIN_DIR OUT_DIR
# Every step runs whatever the one before found, so that a failure comes back with everything else: the
# quick check, compute-sanitizer memcheck of it, the full check (every 128 x 128 case also through the
# new kernel: NaN codes, adversarial scales, persistent CTAs running 2-3 tiles), resources and SASS with
# sass_wgmma_branches.py; the stage rate twice; the benchmark of every scheme with our bf16 and
# torch._scaled_mm interleaved, twice. OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/converters
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}:$bin"
run="$out/run"
mkdir -p "$run"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== mxfp8_gemm_check --quick"
  timeout 90 "$bin/mxfp8_gemm_check" --quick; echo "exit $?"
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 200 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 3
  echo "== mxfp8_gemm_check (full)"
  timeout 150 "$bin/mxfp8_gemm_check"; echo "exit $?"
  echo "== resources"
  cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 'transposed_wide\|transposed_converters'
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|PASS)|^exit|ERROR SUMMARY|REG:" "$run/checks.log"
cuobjdump -sass "$bin/mxfp8_gemm_check" > "$run/gemm_check.sass" 2>&1
python3 kernels/mxfp8/sass_wgmma_branches.py "$run/gemm_check.sass" > "$run/sass_wgmma_branches.txt" 2>&1
echo "sass_wgmma_branches exit $?: $(tail -n 1 "$run/sass_wgmma_branches.txt")"
gzip -9 "$run/gemm_check.sass"
for r in 1 2; do timeout 150 "$bin/mxfp8_stage_rate" --reps 50 > "$run/mxfp8_stage_rate_run$r.json"; done
grep -h '"tile_n": 128' "$run"/mxfp8_stage_rate_run*.json
for r in 1 2; do
  PYTHONUNBUFFERED=1 timeout 270 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$run/bench_gemm_run$r.json" --reps 30 \
    --command "$here/device_call.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 (run $r of 2)" \
    > "$run/bench_run$r.log" 2>&1
  tail -n 7 "$run/bench_run$r.log"
done
date -u
tar -czf "$out/all.tgz" -C "$out" run
