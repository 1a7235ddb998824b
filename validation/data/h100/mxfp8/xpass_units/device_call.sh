#!/usr/bin/env bash
# Issue 20, xpass's W as 16-byte units (kernels/mxfp8/NOTES.md, "xpass's W as 16-byte units"): the H100
# device call that checks the variant and measures it against the committed kernel. From the repository
# root, with two builds carried: BASE_DIR (TILESIM_MXFP8_XPASS_W_UNITS 0, the committed kernel) and VAR_DIR
# (built with it 1), each holding mxfp8_gemm_check, mxfp8_stage_rate, libtilesim_mxfp8_capi.so and
# libtilesim_grouped_gemm_capi.so:
#   validation/data/h100/mxfp8/xpass_units/device_call.sh BASE_DIR VAR_DIR OUT_DIR
# Steps: the variant's quick check, compute-sanitizer memcheck of it, its full check, resources of both;
# the stage rate base/variant interleaved, twice (event times only, --counted 0); the benchmark of every
# scheme with our bf16 interleaved, base, variant, base, variant; the pre-registered rule.
# OUT_DIR/all.tgz holds it all.
set -u -o pipefail
base="$(cd "${1:?usage: device_call.sh BASE_DIR VAR_DIR OUT_DIR}" && pwd)"
var="$(cd "${2:?usage: device_call.sh BASE_DIR VAR_DIR OUT_DIR}" && pwd)"
out="${3:?usage: device_call.sh BASE_DIR VAR_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/xpass_units
cuda_libs="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
run="$out/run"
mkdir -p "$run"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  sha256sum "$base"/* "$var"/*
  echo "== variant: mxfp8_gemm_check --quick"
  timeout 90 env LD_LIBRARY_PATH="$cuda_libs:$var" "$var/mxfp8_gemm_check" --quick; echo "exit $?"
  echo "== variant: compute-sanitizer memcheck mxfp8_gemm_check --quick"
  timeout 200 env LD_LIBRARY_PATH="$cuda_libs:$var" compute-sanitizer --tool memcheck --print-limit 5 "$var/mxfp8_gemm_check" --quick | tail -n 3
  echo "== variant: mxfp8_gemm_check (full)"
  timeout 150 env LD_LIBRARY_PATH="$cuda_libs:$var" "$var/mxfp8_gemm_check"; echo "exit $?"
  for v in base var; do
    d=$base; [ $v = var ] && d=$var
    echo "== $v: resources"
    cuobjdump --dump-resource-usage "$d/mxfp8_gemm_check" | grep -A1 'transposed_xpass'
  done
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|PASS)|^exit|ERROR SUMMARY|REG:" "$run/checks.log" | head -20
cuobjdump -sass "$var/mxfp8_gemm_check" > "$run/gemm_check.sass" 2>&1
python3 kernels/mxfp8/sass_wgmma_branches.py "$run/gemm_check.sass" > "$run/sass_wgmma_branches.txt" 2>&1
echo "sass_wgmma_branches exit $?: $(tail -n 1 "$run/sass_wgmma_branches.txt")"
rm -f "$run/gemm_check.sass"
for r in 1 2; do
  for v in base var; do
    d=$base; [ $v = var ] && d=$var
    timeout 150 env LD_LIBRARY_PATH="$cuda_libs:$d" "$d/mxfp8_stage_rate" --reps 50 --counted 0 > "$run/stage_rate_${v}_run$r.json"
    echo "stage $v run $r exit $?: $(grep -h '"xpass"' "$run/stage_rate_${v}_run$r.json" | tr -s ' ' | cut -c1-200)"
  done
done
for r in 1 2; do
  for v in base var; do
    d=$base; [ $v = var ] && d=$var
    PYTHONUNBUFFERED=1 LD_LIBRARY_PATH="$cuda_libs:$d" timeout 200 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$d/libtilesim_mxfp8_capi.so" \
      --bf16-lib "$d/libtilesim_grouped_gemm_capi.so" --out "$run/bench_${v}_run$r.json" --reps 30 \
      --command "$here/device_call.sh BASE_DIR VAR_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 ($v, run $r of 2)" \
      > "$run/bench_${v}_run$r.log" 2>&1
    echo "bench $v run $r exit $?"; tail -n 7 "$run/bench_${v}_run$r.log"
  done
done
python3 "$here/rule.py" "$run" > "$run/rule.txt" 2>&1
cat "$run/rule.txt"
date -u >> "$run/checks.log"
tar -czf "$out/all.tgz" -C "$out" run
