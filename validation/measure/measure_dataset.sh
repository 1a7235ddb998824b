#!/usr/bin/env bash
# Measures every spec of a specs folder (default validation/data/h100/specs/) with tilesim-measure
# on the GPU machine and writes one result per configuration (same file name) into an output folder.
#
#   validation/measure/measure_dataset.sh BINARY OUT_DIR [MAX_SECONDS] [FILTER] [TRACE] [SPECS_DIR]
#
# BINARY: tilesim-measure; OUT_DIR: where the results go (validation/data/h100/measured/ holds the
# checked-in copy); MAX_SECONDS (default 480): stop starting new configurations after this long, so
# a lease is never overrun; FILTER: a grep -E pattern over config ids (default: all); TRACE: the ids
# that also record the per-tile trace (default: every order of the persistent 128x256 dense 8192,
# E=8 and Zipf-routed shapes; a trace is ~270 KB of JSON, so not every configuration carries one);
# SPECS_DIR: the specs to measure (validation/data/h100/specs_new_shapes/ holds issue 16's shapes).
# Order of work: the persistent 128x256 set first, then non-persistent, then the 128x128 sets, so a
# cut-short run still covers every shape and order once. Each result's provenance holds its command.
set -u -o pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage="usage: measure_dataset.sh BINARY OUT_DIR [MAX_SECONDS] [FILTER] [TRACE] [SPECS_DIR]"
specs="$(cd "${6:-$here/../data/h100/specs}" && pwd)" || { echo "$usage: SPECS_DIR ${6:-} is not a folder"; exit 2; }
bin="${1:?$usage}"
out="${2:?$usage}"
max_seconds="${3:-480}"
filter="${4:-.}"
trace_filter="${5:-^(dense8192|e8x2048|zipf64)_t128x256_p_}"
runs=25
mkdir -p "$out"

ordered_ids() {
  for variant in t128x256_p t128x256_np t128x128_p t128x128_np; do
    ls "$specs" | sed -n "s/^\(.*_${variant}_.*\)\.json$/\1/p" | sort
  done | grep -E "$filter"
}

start=$(date +%s)
ok=0 failed=0 skipped=0
for id in $(ordered_ids); do
  if (( $(date +%s) - start >= max_seconds )); then
    skipped=$((skipped + 1))
    continue
  fi
  t0=$(date +%s.%N)
  trace=()
  if echo "$id" | grep -qE "$trace_filter"; then trace=(--trace); fi
  if "$bin" --kernel "$specs/$id.json" --runs "$runs" --warmup 3 "${trace[@]}" --out "$out/$id.json" \
      2>"$out/$id.log"; then
    ok=$((ok + 1))
    rm -f "$out/$id.log"
  else
    failed=$((failed + 1))
    echo "FAILED $id: $(tail -n 1 "$out/$id.log")"
    if (( ok == 0 && failed >= 3 )); then
      echo "the first $failed configurations failed; stopping"
      break
    fi
  fi
  awk -v id="$id" -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%-40s %6.2f s\n", id, t1 - t0 }'
done
echo "measured $ok, failed $failed, skipped (time budget) $skipped, in $(( $(date +%s) - start )) s"
