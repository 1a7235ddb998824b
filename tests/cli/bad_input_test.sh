#!/usr/bin/env bash
# The issue-17 classes of bad input, each through the real CLI: every case must exit non-zero
# within its time limit, with exactly one line on stderr that holds the expected words and none of
# a library's raw exception text.   usage: bad_input_test.sh <tilesim> <source dir>
set -uo pipefail

# $tilesim, $src, $work, $failures and expect "<name>" "<words>" <tilesim args...>
source "$(dirname "$0")/expect_refusal.sh"

cat >"$work/spec.json" <<'JSON'
{"name":"small","kind":"gemm","dtype":"bf16","m":512,"n":512,"k":256,"tile":{"m":128,"n":128,"k":64},
 "stages":3,"warps":8,"persistent":true,"cluster":2,"order":"row_major"}
JSON
sed 's/"persistent":true/"persistant":true/' "$work/spec.json" >"$work/misspelt.json"
sed 's/"stages":3,/"stages":3,"stages":4,/' "$work/spec.json" >"$work/duplicate.json"
sed 's/"m":512,"n":512/"m":1048576,"n":524296/; s/"tile":{"m":128,"n":128/"tile":{"m":16,"n":8/' "$work/spec.json" >"$work/overflow.json"
# A 1-SM GPU cannot place a cluster of two: the persistent grid had zero CTAs (0 ms, inf TFLOP/s).
sed '0,/"value": 108,/s//"value": 1,/' "$src/models/gpus/a100_sxm4_80gb.json" >"$work/one_sm.json"
sed '/"size_bytes"/{n;s/"value": [0-9.e+]*/"value": 1e12/;}' "$src/models/gpus/a100_sxm4_80gb.json" >"$work/huge_l2.json"
# Issue 16's profile figures: a negative measured epilogue, epilogue tail or first-load cost, and an
# order's own scheduler cost keyed with its group.
sed '/"epilogue_cycles_per_output_kib"/{n;s/"value": [0-9.]*/"value": -1/;}' "$src/models/gpus/h100_sxm.json" >"$work/negative_epilogue.json"
sed '/"cta_first_load_cycles"/{n;s/"value": [0-9.]*/"value": -1/;}' "$src/models/gpus/h100_sxm.json" >"$work/negative_first_load.json"
sed '/"epilogue_tail_cycles"/{n;s/"value": [0-9.]*/"value": -1/;}' "$src/models/gpus/h100_sxm.json" >"$work/negative_tail.json"
sed 's/^    "grouped_m": {/    "grouped_m:8": {/' "$src/models/gpus/h100_sxm.json" >"$work/grouped_order_key.json"
sed '/"gpc_port_bytes_per_s"/{n;s/"value": [0-9.e+]*/"value": 0/;}' "$src/models/gpus/h100_sxm.json" >"$work/closed_gpc_port.json"
mkfifo "$work/fifo.json"
mkdir "$work/folder.json"

expect "FIFO as --kernel" "is not a regular file" simulate --kernel "$work/fifo.json"
expect "FIFO as --gpu" "is not a regular file" simulate --gpu "$work/fifo.json" --kernel "$work/spec.json"
expect "folder as --kernel" "is a folder" simulate --kernel "$work/folder.json"
expect "whatif --kernel ''" "--kernel: '': is empty" whatif --kernel ''
expect "simulate --gpu ''" "--gpu: '': is empty" simulate --gpu '' --kernel "$work/spec.json"
expect "simulate --out ''" "--out: '': is empty" simulate --kernel "$work/spec.json" --out ''
expect "simulate --order ''" "--order: '': is empty" simulate --kernel "$work/spec.json" --order ''
expect "an option holding a newline" "unrecognised option" simulate $'--kernel\nx' "$work/spec.json"
expect "misspelt key" 'persistant: is not a known key; did you mean "persistent"?' simulate --kernel "$work/misspelt.json"
expect "duplicate key" "stages: appears twice" simulate --kernel "$work/duplicate.json"
expect "tile count past int" "tile.m: makes 4295032832 output tiles" simulate --kernel "$work/overflow.json"
expect "cluster on a 1-SM GPU" "cluster: is 2, more than the 1 SM(s)" simulate --gpu "$work/one_sm.json" --kernel "$work/spec.json"
expect "negative measured epilogue" "tiled_gemm.epilogue_cycles_per_output_kib.value: is -1" simulate --gpu "$work/negative_epilogue.json" --kernel "$work/spec.json"
expect "negative first-load cost" "tiled_gemm.cta_first_load_cycles.value: is -1" simulate --gpu "$work/negative_first_load.json" --kernel "$work/spec.json"
expect "negative epilogue tail" "tiled_gemm.epilogue_tail_cycles.value: is -1" simulate --gpu "$work/negative_tail.json" --kernel "$work/spec.json"
expect "scheduler cost keyed with a group" "tile_scheduler.grouped_m:8: is not a known key" simulate --gpu "$work/grouped_order_key.json" --kernel "$work/spec.json"
expect "GPC port of no rate" "l2.gpc_port_bytes_per_s.value: is 0" simulate --gpu "$work/closed_gpc_port.json" --kernel "$work/spec.json"
expect "L2 beyond what the simulator holds" "l2.size_bytes.value: is 1000000000000.0" simulate --gpu "$work/huge_l2.json" --kernel "$work/spec.json"
expect "simulate --out /dev/full" "/dev/full: --out: is not a regular file" simulate --kernel "$work/spec.json" --out /dev/full
expect "validate --time-mape nan" "--time-mape: nan" validate --dataset "$src/validation/data/a100" --time-mape nan
expect "validate --spearman inf" "--spearman: inf" validate --dataset "$src/validation/data/a100" --spearman inf
expect "validate --json into a missing folder" "--json: cannot create a file in its folder" \
  validate --dataset "$src/validation/data/a100" --gpu a100 --clock profile --quiet --json "$work/no/such/dir/v.json"
expect "validate --gpu of another GPU" "gpu: is 'a100', not the profile's" validate --dataset "$src/validation/data/a100" --gpu h100

# Results: the measured side of compare and validate.
measured=$src/validation/data/h100/measured/dense4096_t128x256_p_grouped_m8.json
"$tilesim" simulate --kernel "$src/validation/data/h100/specs/dense4096_t128x256_p_grouped_m8.json" --out "$work/p.json" >/dev/null
"$tilesim" simulate --kernel "$src/validation/data/h100/specs/dense4096_t128x256_p_hilbert.json" --out "$work/p_other.json" >/dev/null
{ printf '{"schema":"tilesim.result/1","extra":'; head -c 200000 /dev/zero | tr '\0' '['; head -c 200000 /dev/zero | tr '\0' ']'; printf '}'; } >"$work/deep.json"
sed 's/"time_ms": [0-9.e-]*/"time_ms": 0/' "$measured" >"$work/time0.json"
sed 's/"tflops": [0-9.e+-]*/"tflops": 1e9/' "$measured" >"$work/tflops.json"
mkdir "$work/clock0" && sed 's/"sm_clock_mhz": [0-9.e+-]*/"sm_clock_mhz": 0/' "$measured" >"$work/clock0/m.json"
expect "deeply nested result" "more than 64 deep" compare "$work/p.json" "$work/deep.json"
expect "measured time 0" "time_ms: is 0" compare "$work/p.json" "$work/time0.json"
expect "measured TFLOP/s 1e9" "tflops: is 1000000000" compare "$work/p.json" "$work/tflops.json"
expect "measured result of another order" 'order (predicted "hilbert", measured "grouped_m:8")' compare "$work/p_other.json" "$measured"
expect "measured SM clock 0" "extra.sm_clock_mhz: is 0" validate --dataset "$work/clock0"
expect "compare files swapped" "source: is 'measured', not a prediction" compare "$measured" "$work/p.json"
"$tilesim" compare "$work/p.json" "$measured" >/dev/null || { echo "FAIL a valid comparison was refused"; failures=$((failures + 1)); }

echo "$failures failure(s)"
((failures == 0))
