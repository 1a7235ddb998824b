#!/usr/bin/env bash
# v20's second device call: the dataset's other 7 configurations on the prmt path of 128-channel
# tiles (e8x512_int8_prmt_t128_*: grouped prefill, 8 experts x 512 tokens on 128-token tiles), which
# the first call's glob (pre*_prmt_*, v18's) left out, measured with v20's tilesim-measure as the
# first call measured the 30 pre* ones; v20's binaries as carried for the first call.
set -u -o pipefail
C=/tmp/bins; mkdir -p $C && tar xJf .carry/prefill2/bins.tar.xz -C $C v20
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
R=/tmp/out2; mkdir -p $R/measured
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  start=$(date +%s) good=0 failed=0
  for spec in validation/data/h100/mixed_input/specs/e8x512_*_prmt_t128_*.json; do
    id="$(basename "$spec" .json)"
    if timeout 60 $C/v20/tilesim-measure --kernel "$spec" --out "$R/measured/$id.json" --runs 25 >"$R/measured/$id.log" 2>&1; then
      good=$((good + 1))
    else
      failed=$((failed + 1)); echo "FAILED $id: $(tail -n 1 "$R/measured/$id.log")"
    fi
  done
  echo "dataset: $good measured, $failed failed in $(( $(date +%s) - start )) s"
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call2.log
tar czf $OUT/out2.tgz -C $R .
