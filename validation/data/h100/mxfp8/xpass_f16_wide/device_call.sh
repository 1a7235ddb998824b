#!/usr/bin/env bash
# Issue 20, xpass_f16's 128 x 256 tile (kernels/mxfp8/NOTES.md, "xpass_f16 at 256 channels"): the H100 device call
# that checks and measures it. From the repository root, with the binaries built here carried in BIN_DIR
# (mxfp8_gemm_check, mxfp8_stage_rate, libtilesim_mxfp8_capi.so, libtilesim_grouped_gemm_capi.so):
#   validation/data/h100/mxfp8/xpass_f16_wide/device_call.sh BIN_DIR OUT_DIR
# Steps: quick check, compute-sanitizer memcheck of it, full check, resources; sass_wgmma_branches.py and the new
# kernel's SASS; the stage rate twice (event times only); the benchmark on the five shapes with 128-token tiles, twice,
# every scheme with our bf16 interleaved (xpass_f16's 128 x 256 candidates beside its 128 x 128 ones); the
# pre-registered rule (wide_rule.py against ../xpass_f16/call5/). No dataset measurement. OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/xpass_f16_wide
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
run="$out/run"
mkdir -p "$run"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  sha256sum "$bin"/*
  echo "== mxfp8_gemm_check --quick"
  timeout 90 "$bin/mxfp8_gemm_check" --quick; echo "exit $?"
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 240 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 3
  echo "== mxfp8_gemm_check (full)"
  timeout 180 "$bin/mxfp8_gemm_check"; echo "exit $?"
  echo "== resources"
  cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 'transposed_xpass'
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|PASS)|^exit|ERROR SUMMARY|REG:|128x256" "$run/checks.log" | head -40
cuobjdump -sass "$bin/mxfp8_gemm_check" > "$run/gemm_check.sass" 2>&1
python3 kernels/mxfp8/sass_wgmma_branches.py "$run/gemm_check.sass" > "$run/sass_wgmma_branches.txt" 2>&1
echo "sass_wgmma_branches exit $?: $(tail -n 1 "$run/sass_wgmma_branches.txt")" | tee -a "$run/checks.log"
awk '/Function : .*xpass_f16_wide_kernel/{f=1;print;next} /Function : /{f=0} f' "$run/gemm_check.sass" | gzip > "$run/xpass_f16_wide_kernel.sass.gz"
rm -f "$run/gemm_check.sass"
for r in 1 2; do
  timeout 150 "$bin/mxfp8_stage_rate" --reps 50 --counted 0 > "$run/stage_rate_run$r.json"
  echo "stage run $r exit $?"; grep -h '"xpass_f16' "$run/stage_rate_run$r.json" | tr -s ' ' | cut -c1-220
done
for r in 1 2; do
  PYTHONUNBUFFERED=1 timeout 240 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$run/bench_gemm_run$r.json" --reps 30 \
    --shapes dense_8192,moe_e8x2048_n4096,moe_e8x2048_n2048,moe_e64x512,moe_e128x128 \
    --command "$here/device_call.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 --shapes dense_8192,moe_e8x2048_n4096,moe_e8x2048_n2048,moe_e64x512,moe_e128x128 (run $r of 2)" \
    > "$run/bench_run$r.log" 2>&1
  echo "bench run $r exit $?"; tail -n 6 "$run/bench_run$r.log"
done
python3 "$here/wide_rule.py" validation/data/h100/mxfp8/xpass_f16/call5 "$run" > "$run/rule.txt" 2>&1
cat "$run/rule.txt"
date -u >> "$run/checks.log"
tar -czf "$out/all.tgz" -C "$out" run
