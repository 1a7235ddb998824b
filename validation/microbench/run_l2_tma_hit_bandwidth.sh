#!/usr/bin/env bash
# Runs l2_tma_hit_bandwidth on a GPU machine with the profile's measured SM-to-GPC and
# SM-to-partition maps and writes its JSON with the command, driver, date and exit code.
# Usage, from the repository root: validation/microbench/run_l2_tma_hit_bandwidth.sh BINARY OUT.json [PROFILE]
# BINARY: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. \
#   validation/microbench/l2_tma_hit_bandwidth.cu kernels/common/tensor_maps.cu -o BINARY
set -euo pipefail
binary=$1
out=$2
profile=${3:-models/gpus/h100_sxm.json}
read -r gpcs partitions < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(",".join(map(str, p["sm"]["gpc"]["value"])), ",".join(map(str, p["l2"]["sm_partition"]["value"])))' "$profile")
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
rc=0
timeout 300 "$binary" "$gpcs" "$partitions" >"$raw" || rc=$?
python3 - "$raw" "$out" "${driver:-unknown}" "$rc" "$profile" <<'PY'
import datetime, json, shutil, sys
raw, out, driver, rc, profile = sys.argv[1:6]
try:
    data = json.load(open(raw))
except ValueError as e:
    shutil.copy(raw, out + ".raw.txt")
    sys.exit(f"l2_tma_hit_bandwidth: exit {rc}, output is not valid JSON ({e})")
data["command"] = ("validation/microbench/run_l2_tma_hit_bandwidth.sh BINARY OUT.json " + profile +
                   " (BINARY: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. "
                   "validation/microbench/l2_tma_hit_bandwidth.cu kernels/common/tensor_maps.cu)")
data["exit_code"] = int(rc)
data["driver"] = driver
data["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
json.dump(data, open(out, "w"), indent=1)
PY
exit "$rc"
