#!/usr/bin/env bash
# Builds and runs microbenchmarks on a GPU machine (NAMEs; by default wgmma_throughput, tma_latency
# and launch_overhead); writes OUT_DIR/<name>.json (OUT_DIR defaults to
# validation/data/h100/microbench) with its provenance, and prints each. One that fails to build,
# crashes or hangs is reported and the others still run; the exit status is non-zero if any failed.
# Usage, from the repository root: bash validation/microbench/run_compute_microbench.sh [OUT_DIR [NAME...]]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out_dir=${1:-$root/validation/data/h100/microbench}
mkdir -p "$out_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
flags="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a" # as validation/microbench/CMakeLists.txt
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
status=0
names=("${@:2}")
[ ${#names[@]} -gt 0 ] || names=(wgmma_throughput tma_latency launch_overhead)
for name in "${names[@]}"; do
  echo "== $name" >&2
  sources=("$here/$name.cu")
  shown="$name.cu" # the sources as the recorded command names them
  # These make their tensor maps with the kernels' own maker.
  case "$name" in
    tma_latency | l2_pending_hit) sources+=("$root/kernels/common/tensor_maps.cu") shown+=" kernels/common/tensor_maps.cu" ;;
  esac
  # shellcheck disable=SC2086
  if ! "$nvcc" $flags -I"$root" -o "$tmp/$name" "${sources[@]}"; then
    echo "$name: build failed" >&2
    status=1
    continue
  fi
  rc=0
  timeout 300 "$tmp/$name" >"$tmp/$name.out" || rc=$?
  if ! python3 - "$tmp/$name.out" "$out_dir/$name.json" "${driver:-unknown}" "$rc" "$flags" "$name" "$shown" <<'PY'; then
import datetime, json, os, shutil, sys
raw, out, driver, rc, flags, name, sources = sys.argv[1:8]
try:
    data = json.load(open(raw))
except ValueError as e:
    if os.path.getsize(raw) > 0:  # keep what it printed (a crash mid-way) next to where the result goes
        shutil.copy(raw, out[:-5] + ".raw.txt")
    sys.exit(f"{name}: exit {rc}, output is not valid JSON ({e})")
data["command"] = f"validation/microbench/run_compute_microbench.sh (nvcc {flags} -I. {sources}; run)"
data["exit_code"] = int(rc)
data["driver"] = driver
data["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
with open(out, "w") as f:
    json.dump(data, f, indent=1)
print(json.dumps(data, indent=1))
PY
    status=1
  fi
  [ "$rc" -eq 0 ] || { echo "$name: exit status $rc" >&2; status=1; }
done
exit "$status"
