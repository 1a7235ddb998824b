#!/usr/bin/env bash
# Builds and runs tma_box_stream_bandwidth on a GPU machine; writes
# OUT_DIR/tma_box_stream_bandwidth.json (OUT_DIR defaults to validation/data/h100/microbench) with
# its provenance. Usage: run_tma_box_stream.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out_dir=${1:-$here/../data/h100/microbench}
mkdir -p "$out_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a" # as validation/microbench/CMakeLists.txt
# shellcheck disable=SC2086
nvcc $flags -o "$tmp/tma_box_stream_bandwidth" "$here/tma_box_stream_bandwidth.cu"
# The program prints its JSON even when a configuration fails (an "error" entry) or the host watchdog
# fires (exit 2); keep what it printed and record the exit status.
rc=0
"$tmp/tma_box_stream_bandwidth" >"$tmp/raw.json" || rc=$?
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1 || echo unknown)
python3 - "$tmp/raw.json" "$out_dir/tma_box_stream_bandwidth.json" "$driver" "$rc" "$flags" <<'PY'
import datetime, json, sys
raw, out, driver, rc, flags = sys.argv[1:6]
try:
    data = json.load(open(raw))
except ValueError as e:
    sys.exit(f"run_tma_box_stream.sh: the benchmark (exit {rc}) printed no valid JSON: {e}")
data["command"] = f"validation/microbench/run_tma_box_stream.sh (nvcc {flags} tma_box_stream_bandwidth.cu; run)"
data["exit_code"] = int(rc)
data["driver"] = driver
data["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
with open(out, "w") as f:
    json.dump(data, f, indent=1)
for c in data.get("configs", []):
    print(f'{c["name"]:28s}', c.get("error") or f'{c["median_tb_per_s"]:.3f} TB/s, {c["ratio_to_datasheet"]:.3f} of datasheet')
print("wrote", out)
PY
exit "$rc"
