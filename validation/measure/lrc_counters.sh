#!/usr/bin/env bash
# The L2 request coalescer's own counters (ncu's lrc__*.sum: sectors the SMs asked for, sectors it
# merged with another request of the same GPC, sectors sent on to the L2) beside the L2's read
# lookups and the SMs' TMA traffic, for dataset GEMMs.
#
#   validation/measure/lrc_counters.sh TILESIM_MEASURE OUT_CSV "IDS"
#
# IDS: space-separated spec ids under validation/data/h100/specs. Writes ncu's CSV rows of the .sum
# metrics (one row per kernel and metric) to OUT_CSV; needs ncu and a GPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
specs="$(cd "$here/../data/h100/specs" && pwd)"
usage="usage: lrc_counters.sh TILESIM_MEASURE OUT_CSV \"IDS\""
bin="${1:?$usage}"
out="${2:?$usage}"
ids="${3:?$usage}"
metrics="regex:^lrc__,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,gpu__time_duration.sum"
for id in $ids; do
  ncu --clock-control none --cache-control all --launch-skip 1 --launch-count 1 --csv --print-units base \
    --metrics "$metrics" -k regex:grouped_gemm "$bin" --kernel "$specs/$id.json" --launch-only --runs 1 --warmup 1
done | grep -E '^"' | awk -F'","' 'NR == 1 || $13 ~ /\.sum$/' >"$out"
echo "wrote $(wc -l <"$out") rows to $out"
