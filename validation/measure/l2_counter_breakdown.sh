#!/usr/bin/env bash
# What the L2 counters behind the dataset's hit rate count: ncu reads every lts__t_sectors counter
# split by source unit (the SM's TEX/TMA path, the fabric between the two L2 partitions, ...) and by
# lookup outcome, beside the SMs' own TMA traffic, over kernels whose traffic is known by
# construction: a streaming copy (every read misses, every write is new) and GEMMs (by default two
# calibration GEMMs, one DRAM-streaming and one L2-resident).
#
#   validation/measure/l2_counter_breakdown.sh TILESIM_MEASURE OUT_CSV [GEMM_IDS] [--no-copy]
#
# GEMM_IDS: space-separated spec ids under validation/data/h100/specs (default: the two below);
# --no-copy skips the streaming copy. Writes ncu's CSV (one row per kernel and metric) to OUT_CSV;
# needs ncu and a GPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
specs="$(cd "$here/../data/h100/specs" && pwd)"
usage="usage: l2_counter_breakdown.sh TILESIM_MEASURE OUT_CSV [GEMM_IDS] [--no-copy]"
bin="${1:?$usage}"
out="${2:?$usage}"
gemm_ids="${3:-e128x128_t128x256_np_expert_major8 dense8192_t128x256_p_grouped_m8}"
with_copy=true
[[ "${4:-}" == "--no-copy" ]] && with_copy=false

# Every L2 tag-stage sector counter this chip has, split by source unit or lookup outcome.
metrics=$(ncu --query-metrics --chip gh100 --csv 2>/dev/null | cut -d, -f1 | tr -d '"' |
  grep -E '^lts__t_(sectors|requests)_(srcunit_[a-z]+(_op_(read|write))?(_lookup_(hit|miss))?|lookup_(hit|miss)|op_(read|write)(_lookup_(hit|miss))?)$' |
  sed 's/$/.sum/' | paste -sd, - || true)
# ncu that cannot list the chip's counters gets the names its documentation uses.
[[ -n "$metrics" ]] || metrics=lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_lookup_hit.sum,lts__t_sectors_lookup_miss.sum,lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum
# What the SMs asked for and received by TMA, beside what the L2 looked up.
metrics="$metrics,l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld_dest_multicast.sum,l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld_dest_multicast.sum"
metrics="$metrics,lts__t_sectors.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum"
echo "metrics: $metrics"
flags=(--clock-control none --cache-control all --launch-skip 1 --launch-count 1 --csv --print-units base --metrics "$metrics")
{
  if $with_copy; then
    ncu "${flags[@]}" -k regex:streaming_copy "$bin" --copy-bytes 2147483648 --launch-only --runs 1 --warmup 1
  fi
  for id in $gemm_ids; do
    ncu "${flags[@]}" -k regex:grouped_gemm "$bin" --kernel "$specs/$id.json" --launch-only --runs 1 --warmup 1
  done
} | grep -E '^"' >"$out"
echo "wrote $(wc -l <"$out") rows to $out"
