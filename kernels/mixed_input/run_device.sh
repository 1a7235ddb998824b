#!/usr/bin/env bash
# One device-machine session for the mixed-input GEMM (H100): SASS of the kernels, the full GPU
# check, compute-sanitizer on the quick check and on one bench shape, the conversion issue-rate
# and K-block microbenchmarks, the benchmark against cuBLAS bf16 and our bf16 grouped GEMM, and
# the measured dataset.
#
#   kernels/mixed_input/run_device.sh BIN_DIR OUT_DIR [DATASET_SECONDS] [SPEC_GLOB]
#
# BIN_DIR holds mixed_input_check, mixed_input_bench, mixed_input_block_rate, dequant_issue_rate
# and tilesim-measure. OUT_DIR gets: run.log, sass.txt.gz, sanitizer.log, bench_sanitizer.log,
# dequant_issue_rate.json, mixed_input_block_rate.json, bench_mixed_input.json and measured.tgz
# (one result per spec of validation/data/h100/mixed_input/specs/ matching SPEC_GLOB, default all,
# the same file names).
# The bench and the dataset run only when the check passes: timings of a wrong kernel are worth
# nothing.
set -u -o pipefail
bin="$(cd "$1" && pwd)" out="${2:?usage: run_device.sh BIN_DIR OUT_DIR [DATASET_SECONDS]}"
dataset_seconds="${3:-300}" spec_glob="${4:-*}"
here="$(cd "$(dirname "$0")" && pwd)"
specs="$here/../../validation/data/h100/mixed_input/specs"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  cuobjdump -sass "$bin/mixed_input_check" | gzip >"$out/sass.txt.gz"
  echo "== mixed_input_check (full, $(date -u +%H:%M:%S))"
  "$bin/mixed_input_check"
  check_rc=$?
  echo "check exit $check_rc"
  echo "== compute-sanitizer memcheck, mixed_input_check --quick ($(date -u +%H:%M:%S))"
  timeout 180 compute-sanitizer --tool memcheck "$bin/mixed_input_check" --quick >"$out/sanitizer.log" 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' "$out/sanitizer.log") clean summary line(s)"
  tail -n 2 "$out/sanitizer.log"
  echo "== compute-sanitizer memcheck, mixed_input_bench --only decode_m1 (its lead kernel) ($(date -u +%H:%M:%S))"
  timeout 120 compute-sanitizer --tool memcheck "$bin/mixed_input_bench" --only decode_m1 --reps 2 \
    --out /tmp/bench_sanitized.json >"$out/bench_sanitizer.log" 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' "$out/bench_sanitizer.log") clean summary line(s)"
  echo "== dequant_issue_rate"
  "$bin/dequant_issue_rate" | tee "$out/dequant_issue_rate.json"
  echo "== mixed_input_block_rate ($(date -u +%H:%M:%S))"
  "$bin/mixed_input_block_rate" --reps 50 | tee "$out/mixed_input_block_rate.json"
  if (( check_rc != 0 )); then
    echo "check failed: no bench, no dataset"
    exit 1
  fi
  echo "== mixed_input_bench ($(date -u +%H:%M:%S))"
  "$bin/mixed_input_bench" --out "$out/bench_mixed_input.json" --reps 30 --driver "$driver" \
    --command "kernels/mixed_input/run_device.sh BIN_DIR \$OUT $dataset_seconds (mixed_input_bench --reps 30)"
  echo "== dataset ($(date -u +%H:%M:%S))"
  rm -rf /tmp/measured && mkdir -p /tmp/measured
  start=$(date +%s) ok=0 failed=0 skipped=0
  for spec in "$specs"/$spec_glob.json; do
    id="$(basename "$spec" .json)"
    if (( $(date +%s) - start >= dataset_seconds )); then skipped=$((skipped + 1)); continue; fi
    if "$bin/tilesim-measure" --kernel "validation/data/h100/mixed_input/specs/$id.json" \
         --out "/tmp/measured/$id.json" --runs 25 >/tmp/measured/"$id".log 2>&1; then
      ok=$((ok + 1))
    else
      failed=$((failed + 1)); echo "FAILED $id: $(tail -n 1 /tmp/measured/"$id".log)"
    fi
  done
  echo "dataset: $ok measured, $failed failed, $skipped skipped in $(( $(date +%s) - start )) s"
  tar czf "$out/measured.tgz" -C /tmp measured
} 2>&1 | tee "$out/run.log"
