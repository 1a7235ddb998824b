#!/usr/bin/env bash
# Issue 20, the 128 x 128 transposed kernel's NaN check once per stage by a warp vote: the H100 device
# call that measured it (kernels/mxfp8/NOTES.md, "Fewer instructions a stage"; run as
# validation/data/h100/mxfp8/nan_vote/device_call.sh, moved here after). From the repository root,
# with the binaries built here carried in BIN_DIR (BIN_DIR/head/mxfp8_gemm_check: the same check
# program built with HEAD's transposed kernels, 606653e, to tell the kernel's faults from the vote's):
#   validation/data/h100/mxfp8/tried/nan_vote/device_call.sh BIN_DIR OUT_DIR
# Every step runs whatever the check says (a failing case is read against HEAD's run of it):
# the full check with HEAD's kernels; the quick check, compute-sanitizer memcheck of it and the full
# check with the vote; SASS counts; the stage rate 3 times; the benchmark of every scheme with our
# bf16 interleaved, twice; the 7 t128n128 dataset configurations (tilesim-measure, 25 runs, 3 warm-up);
# Nsight Compute on one 64-stage launch of the 128 x 128 kernel inside the stage-rate microbenchmark.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
mkdir -p "$out/measured"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== HEAD's kernels: mxfp8_gemm_check (full)"
  timeout 150 "$bin/head/mxfp8_gemm_check"
  echo "== the vote: mxfp8_gemm_check --quick"
  timeout 60 "$bin/mxfp8_gemm_check" --quick
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 3
  echo "== the vote: mxfp8_gemm_check (full)"
  timeout 150 "$bin/mxfp8_gemm_check"
  echo "== resources"
  cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 'transposed_wide'
  date -u
} > "$out/checks.log" 2>&1
for r in 1 2 3; do timeout 120 "$bin/mxfp8_stage_rate" --reps 50 > "$out/mxfp8_stage_rate_run$r.json"; done
for r in 1 2; do
  PYTHONUNBUFFERED=1 timeout 240 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$out/bench_gemm_run$r.json" --reps 30 \
    --command "validation/data/h100/mxfp8/nan_vote/device_call.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 (run $r of 2)" \
    > "$out/bench_run$r.log" 2>&1
done
{
  for spec in validation/data/h100/mxfp8/specs/g_*t128n128*.json; do
    id=$(basename "$spec" .json)
    if timeout 60 "$bin/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$out/measured/$id.json" 2>"$out/measured/$id.log"; then
      echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['tflops'], r['dram_read_bytes'], r['l2_hit_rate'])" "$out/measured/$id.json")"
      rm -f "$out/measured/$id.log"
    else
      echo "FAILED $id: $(tail -n 1 "$out/measured/$id.log")"
    fi
  done
  date -u
} > "$out/dataset.log" 2>&1
timeout 120 ncu --clock-control none --kernel-name regex:transposed_wide --launch-skip 60 --launch-count 1 \
  --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section InstructionStats --print-details all "$bin/mxfp8_stage_rate" --reps 50 > "$out/ncu_transposed_wide.txt" 2>&1
date -u >> "$out/dataset.log"
