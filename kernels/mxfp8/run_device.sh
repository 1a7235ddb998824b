#!/usr/bin/env bash
# Issue 20's quantiser device session (H100), one call: compute-sanitizer memcheck once on the new
# kernels, the bit-exact check, the benchmark at 16384 x 7168 against torch.compile and the copy,
# the SASS and resources of the kernels, and the quantiser dataset.
#
#   kernels/mxfp8/run_device.sh BIN_DIR OUT_DIR [SWEEP_SECONDS]
#
# BIN_DIR holds tilesim-measure, mxfp8_check and libtilesim_mxfp8_capi.so. Writes OUT_DIR/checks.log,
# bench_quantize.json, sass_counts.txt, dataset.log and measured.tgz (one result per spec of
# validation/data/h100/mxfp8/specs/, same file name, each with its exact command in its provenance),
# starting no configuration after SWEEP_SECONDS (default 150).
set -u -o pipefail
bin="$(cd "${1:?usage: run_device.sh BIN_DIR OUT_DIR [SWEEP_SECONDS]}" && pwd)"
out="${2:?usage: run_device.sh BIN_DIR OUT_DIR [SWEEP_SECONDS]}"
sweep_seconds="${3:-150}"
specs=validation/data/h100/mxfp8/specs
mkdir -p "$out/measured"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== compute-sanitizer memcheck: mxfp8_check --quick"
  timeout 120 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_check" --quick | tail -n 4
  echo "== mxfp8_check (full)"
  timeout 120 "$bin/mxfp8_check" | grep -vE "^ok "
  echo "== SASS instruction counts and resources per kernel"
  if command -v cuobjdump > /dev/null; then
    cuobjdump -sass "$bin/mxfp8_check" | awk '/Function :/ {name=$3} /^ +\/\*[0-9a-f]+\*\// {count[name]++} END {for (n in count) print count[n], n}' |
      grep -i mxfp8 | tee "$out/sass_counts.txt"
    cuobjdump --dump-resource-usage "$bin/mxfp8_check" | grep -A1 -i "quantize\|dequantize" | tee -a "$out/sass_counts.txt"
  else
    echo "no cuobjdump"
  fi
  echo "== benchmark 16384 x 7168: ours, torch.compile, copy"
  PYTHONUNBUFFERED=1 timeout 200 python3 kernels/mxfp8/bench_quantize.py --lib "$bin/libtilesim_mxfp8_capi.so" \
    --out "$out/bench_quantize.json"
  date -u
} 2>&1 | tee "$out/checks.log"
{
  echo "== dataset: $(ls $specs | wc -l) configurations"
  start=$(date +%s)
  for spec in $specs/*.json; do
    id=$(basename "$spec" .json)
    if (( $(date +%s) - start >= sweep_seconds )); then echo "SKIPPED $id (time)"; continue; fi
    if ! "$bin/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$out/measured/$id.json" 2>"$out/measured/$id.log"; then
      echo "FAILED $id: $(tail -n 1 "$out/measured/$id.log")"
    else
      echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['dram_read_bytes'], r['dram_write_bytes'], r['l2_hit_rate'])" "$out/measured/$id.json")"
      rm -f "$out/measured/$id.log"
    fi
  done
  echo "dataset took $(( $(date +%s) - start )) s"
  date -u
} 2>&1 | tee "$out/dataset.log"
tar -czf "$out/measured.tgz" -C "$out" measured
rm -rf "$out/measured"
