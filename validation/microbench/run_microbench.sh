#!/usr/bin/env bash
# Builds and runs the memory microbenchmarks on a GPU machine; writes
# validation/data/<gpu>/microbench/bulk_copy_bandwidth.json (or $1) with its provenance.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../data/h100/microbench/bulk_copy_bandwidth.json}
bin=$(mktemp -d)/bulk_copy_bandwidth
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o "$bin" "$here/bulk_copy_bandwidth.cu"
raw=$("$bin")
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1)
python3 - "$out" "$driver" <<PY
import json, sys, datetime
data = json.loads('''$raw''')
data["command"] = "validation/microbench/run_microbench.sh (nvcc -O3 -gencode=arch=compute_90a,code=sm_90a bulk_copy_bandwidth.cu; run)"
data["driver"] = sys.argv[2]
data["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
with open(sys.argv[1], "w") as f:
    json.dump(data, f, indent=1)
print(json.dumps({k: v for k, v in data.items() if k != "block_scheduler_smid_of_block"}, indent=1))
PY
