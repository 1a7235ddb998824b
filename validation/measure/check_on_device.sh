#!/usr/bin/env bash
# One device-machine session: checks tilesim-measure against ncu on a streaming copy and on a few
# GEMM configurations, then (with DATASET_SECONDS > 0) measures the dataset for at most that long.
#
#   validation/measure/check_on_device.sh BINARY RESULTS_DIR [DATASET_SECONDS]
#
# RESULTS_DIR gets: check.log, copy.json, ncu_copy.csv, ncu_gemm.csv, dataset.log and measured.tgz
# (one JSON per configuration). The GEMM figures to compare with ncu_gemm.csv are the dataset's
# results of the same configurations. ncu runs with --clock-control none (leave the clocks as
# found) and its default --cache-control all (caches flushed before the profiled kernel), the state
# the harness recreates with its own L2 flush.
set -u -o pipefail
here="$(cd "$(dirname "$0")" && pwd)"
specs="$(cd "$here/../data/h100/specs" && pwd)"
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
res="${2:?usage: check_on_device.sh BINARY RESULTS_DIR [DATASET_SECONDS]}"
dataset_seconds="${3:-0}"
mkdir -p "$res"
metrics=lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum
ncu_flags=(--clock-control none --cache-control all --launch-skip 1 --launch-count 1 --csv --print-units base)
copy_bytes=2147483648 # 2 GiB: 40x the H100's 50 MB L2
gemm_ids="dense8192_t128x256_p_grouped_m8 dense8192_t128x256_p_hilbert e64x512_t128x256_np_interleaved"

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  ldd "$bin" | grep -E "cupti|not found"
  echo "== tilesim-measure, streaming copy of $copy_bytes bytes"
  "$bin" --copy-bytes $copy_bytes --runs 20 --out "$res/copy.json"
  echo "== ncu, streaming copy"
  ncu "${ncu_flags[@]}" --metrics $metrics,gpu__time_duration.sum -k regex:streaming_copy \
    "$bin" --copy-bytes $copy_bytes --launch-only --runs 1 --warmup 1 >"$res/ncu_copy.csv" 2>&1
  : >"$res/ncu_gemm.csv"
  for id in $gemm_ids; do
    echo "== ncu, $id"
    ncu "${ncu_flags[@]}" --metrics $metrics,gpu__time_duration.sum -k regex:grouped_gemm \
      "$bin" --kernel "$specs/$id.json" --launch-only --runs 1 --warmup 1 >>"$res/ncu_gemm.csv" 2>&1
  done
  grep -h -E '"(lts|dram|gpu)__' "$res/ncu_copy.csv" "$res/ncu_gemm.csv" | awk -F'","' '{print $(NF-2), $NF}'
} >"$res/check.log" 2>&1
cat "$res/check.log"

if (( dataset_seconds > 0 )); then
  rm -rf /tmp/measured
  "$here/measure_dataset.sh" "$bin" /tmp/measured "$dataset_seconds" >"$res/dataset.log" 2>&1
  tail -n 3 "$res/dataset.log"
  tar czf "$res/measured.tgz" -C /tmp measured
fi
