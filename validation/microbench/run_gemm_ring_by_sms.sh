#!/usr/bin/env bash
# Runs gemm_ring_by_sms twice on a GPU machine (the grouped GEMM with its persistent grid cut to
# 2-132 SMs; issue 16) and writes OUT_DIR/gemm_ring_by_sms_run{1,2}.json with their provenance.
# BINARY is the program built from this tree (cmake --build BUILD --target gemm_ring_by_sms: nvcc
# -O3 -gencode=arch=compute_90a,code=sm_90a, linked with kernels/grouped_gemm).
# Usage, from the repository root: run_gemm_ring_by_sms.sh BINARY OUT_DIR [PHASE_MS]
set -euo pipefail
binary=$1
out_dir=$2
phase_ms=${3:-250}
mkdir -p "$out_dir"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1 || true)
commit=${TREE_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)} # TREE_COMMIT: where the tree has no .git
status=0
for run in 1 2; do
  rc=0
  timeout 240 "$binary" "$phase_ms" >"$out_dir/raw.json" 2>"$out_dir/run$run.log" || rc=$?
  python3 - "$out_dir/raw.json" "$out_dir/gemm_ring_by_sms_run$run.json" "${driver:-unknown}" "$rc" "$commit" "$phase_ms" <<'PY'
import datetime, json, sys
raw, out, driver, rc, commit, phase_ms = sys.argv[1:7]
try:
    data = json.load(open(raw))
except ValueError as e:
    sys.exit(f"gemm_ring_by_sms: exit {rc}, output is not valid JSON ({e})")
data["command"] = (f"validation/microbench/run_gemm_ring_by_sms.sh BINARY OUT_DIR {phase_ms} (BINARY: cmake --build BUILD "
                   f"--target gemm_ring_by_sms, Release, nvcc -gencode=arch=compute_90a,code=sm_90a; tree of {commit} "
                   "with validation/microbench/gemm_ring_by_sms.cu)")
data["exit_code"] = int(rc)
data["driver"] = driver
data["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
json.dump(data, open(out, "w"))
for c in data["configs"]:
    print(f'{c["m"]}x{c["n"]}x{c["k"]} 128x{c["tile"][1]} sms {c["sms_given"]:3d} grid {c["grid"]:3d}: '
          f'{c["median_ms"]:.4f} ms at {c["sm_clock_mhz"]} MHz, check {c["check"]} ({c["max_rel_error"]:.2e})')
PY
  [ "$rc" = 0 ] || status=$rc
done
rm -f "$out_dir/raw.json"
exit "$status"
