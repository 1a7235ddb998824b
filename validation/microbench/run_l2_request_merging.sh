#!/usr/bin/env bash
# Builds an L2 request-merging probe (PROBE.cu: l2_request_merging, the default, or
# l2_merging_pairs) and runs it under ncu on a GPU machine: the L2's read lookups for each launch,
# against the sectors the launch requested (they differ in which SMs ask for a box together or
# shortly after one another).
# Writes OUT_JSON (default validation/data/h100/microbench/PROBE.json) with its provenance.
# Usage, from the repository root: bash validation/microbench/run_l2_request_merging.sh [OUT_JSON [PROBE]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
probe=${2:-l2_request_merging}
out=${1:-$root/validation/data/h100/microbench/$probe.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a" # as validation/microbench/CMakeLists.txt
# shellcheck disable=SC2086
nvcc $flags -I"$root" -o "$tmp/probe" "$here/$probe.cu" "$root/kernels/common/tensor_maps.cu"
metrics=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,dram__bytes_read.sum,gpu__time_duration.sum
# The probe flushes the L2 itself before each walk (ncu's flush would be the same; its own
# `--cache-control all` is left off so that nothing else runs between the flush and the walk).
ncu --clock-control none --cache-control none -k regex:_walk --csv --print-units base \
  --metrics "$metrics" --log-file "$tmp/ncu.csv" "$tmp/probe" >"$tmp/probe.json"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1)
ncu_version=$(ncu --version | tail -n1)
python3 - "$tmp/probe.json" "$tmp/ncu.csv" "$out" "$driver" "$ncu_version" "$flags" "$probe" <<'PY'
import csv, datetime, json, sys
probe, ncu_csv, out, driver, ncu_version, flags, name = sys.argv[1:8]
data = json.load(open(probe))
rows = [r for r in csv.reader(open(ncu_csv)) if len(r) > 14 and r[0] != "ID"]
launches = []  # one dict of metric -> value per profiled launch, in launch order
for r in rows:
    if not launches or r[12] in launches[-1]:
        launches.append({})
    launches[-1][r[12]] = float(r[14].replace(",", ""))
if len(launches) != len(data["launches"]):
    sys.exit(f"{name}: {len(launches)} profiled launches, {len(data['launches'])} made")
for entry, m in zip(data["launches"], launches):
    entry["counters"] = m
    requested = entry.get("requested_sectors", data.get("requested_sectors_per_launch"))
    entry["l2_read_lookups_per_requested_sector"] = m["lts__t_sectors_srcunit_tex_op_read.sum"] / requested
data["command"] = (f"validation/microbench/run_l2_request_merging.sh OUT.json {name} (nvcc " + flags +
                   f" -I. {name}.cu kernels/common/tensor_maps.cu; ncu --clock-control none --cache-control none)")
data["driver"], data["ncu"] = driver, ncu_version
data["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
json.dump(data, open(out, "w"), indent=1)
for e in data["launches"]:
    c = e["counters"]
    what = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("counters", "l2_read_lookups_per_requested_sector"))
    print(f"{what}  lookups/requested {e['l2_read_lookups_per_requested_sector']:.3f}  "
          f"hit {c['lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum']/1e6:7.2f}M miss {c['lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum']/1e6:7.2f}M "
          f"fabric {c['lts__t_sectors_srcunit_ltcfabric_op_read.sum']/1e6:6.2f}M sm-received {c['l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum']/1e6:7.2f}M "
          f"dram {c['dram__bytes_read.sum']/1e6:7.1f}MB  {c['gpu__time_duration.sum']/1e3:7.1f}us")
PY
