#!/usr/bin/env bash
# Issue 20, the converter-warpgroup 128 x 128 transposed tile with release_on_completion.patch on top of
# converters.patch (kernels/mxfp8/NOTES.md, "Converter warpgroups"; the decision rule is there): the H100
# device call that checked and measured it. The base is ../device_call.sh; what differs: the benchmark
# script is the patched tree's bench_gemm.py, carried with the binaries (it knows the 'converters'
# scheme, which the committed one does not), and when either stage-rate run puts the new kernel's
# 3-FP8-stage stage above 1,300 ns, Nsight Compute profiles one 64-stage launch of it inside the stage-rate
# microbenchmark (warp states, schedulers, instruction mix, stall sampling by SASS line). From the
# repository root, with the binaries built here carried in BIN_DIR (mxfp8_gemm_check, mxfp8_stage_rate,
# libtilesim_mxfp8_capi.so, libtilesim_grouped_gemm_capi.so, bench_gemm.py):
#   validation/data/h100/mxfp8/tried/converters/release_on_completion/device_call.sh BIN_DIR OUT_DIR
# OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/tried/converters/release_on_completion
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
  PYTHONUNBUFFERED=1 timeout 270 python3 "$bin/bench_gemm.py" --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$run/bench_gemm_run$r.json" --reps 30 \
    --command "$here/device_call.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 (run $r of 2)" \
    > "$run/bench_run$r.log" 2>&1
  tail -n 7 "$run/bench_run$r.log"
done
date -u
# The new kernel's 3-stage record in each run (the variant with "converters": 3 and "stages": 3).
slow=$(python3 - "$run"/mxfp8_stage_rate_run1.json "$run"/mxfp8_stage_rate_run2.json <<'PY'
import json, sys
ns = [c["ns_per_stage"] for f in sys.argv[1:] for c in json.load(open(f))["configs"]
      if c.get("converters") == 3 and c["stages"] == 3]
print("yes" if not ns or max(ns) > 1300 else "no")
PY
)
echo "stage above 1,300 ns: $slow"
if [ "$slow" = yes ]; then
  # With --reps 5 each depth is 5 warm-up and 5 timed launches: the 16th launch of the kernel is the
  # first timed one at K = 8,192 (64 stages) of its 3-stage variant. Clocks and caches left as they are
  # (operands L2-resident, as the stage rate measures them).
  timeout 200 ncu --clock-control none --cache-control none --kernel-name regex:transposed_converters \
    --launch-skip 15 --launch-count 1 --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section SourceCounters \
    -o "$run/ncu_converters" "$bin/mxfp8_stage_rate" --reps 5 > "$run/ncu_run.log" 2>&1
  echo "ncu exit $?"
  ncu --import "$run/ncu_converters.ncu-rep" --print-details all > "$run/ncu_converters.txt" 2>&1
  ncu --import "$run/ncu_converters.ncu-rep" --page source --csv --print-source sass \
    > "$run/ncu_converters_source.csv" 2>&1
  echo "ncu import exit $?"
  gzip -9 "$run/ncu_converters_source.csv"
  grep -A30 "Section: Warp State Statistics" "$run/ncu_converters.txt" | head -40
fi
date -u
tar -czf "$out/all.tgz" -C "$out" run
