#!/usr/bin/env bash
# Runs tma_box_stream_bandwidth's active_sms set on a GPU machine (the W stream with 33-132 SMs
# streaming, and with staggered pauses; issue 16) and writes OUT_DIR/tma_box_stream_active_sms.json
# with its provenance. BINARY is the program built from this tree with
#   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -o BINARY validation/microbench/tma_box_stream_bandwidth.cu
# Usage, from the repository root: run_tma_box_stream_active_sms.sh BINARY OUT_DIR
set -euo pipefail
binary=$1
out_dir=$2
mkdir -p "$out_dir"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
rc=0
timeout 300 "$binary" active_sms >"$out_dir/raw.json" || rc=$?
python3 - "$out_dir/raw.json" "$out_dir/tma_box_stream_active_sms.json" "${driver:-unknown}" "$rc" "$commit" <<'PY'
import datetime, json, sys
raw, out, driver, rc, commit = sys.argv[1:6]
data = json.load(open(raw))
data["command"] = ("nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -o tma_box_stream_bandwidth "
                   f"validation/microbench/tma_box_stream_bandwidth.cu (tree of {commit}); tma_box_stream_bandwidth active_sms")
data["exit_code"] = int(rc)
data["driver"] = driver
data["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
json.dump(data, open(out, "w"), indent=1)
for c in data["configs"]:
    print(c["name"], c.get("ctas"), c.get("pause_ns"), c.get("median_tb_per_s"), [r.get("gb_per_s_per_sm") for r in c.get("repeats", [])], c.get("error", ""))
PY
rm -f "$out_dir/raw.json"
exit "$rc"
