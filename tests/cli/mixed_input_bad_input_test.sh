#!/usr/bin/env bash
# Issue 14's mixed-input specs through the real CLI: a tile the kernel is not built for, a K per
# stage (tile.k) the profile's K-block costs were not measured at (16-token tiles were measured
# with 128, 64-token ones with 256), and a profile's mixed_input_k_block_cycles without its tile_k
# list, the TMA-store epilogue on a 64-channel tile. Each must exit non-zero with one line on
# stderr naming the file, the field and the fix; the measured stage K simulates.
#   usage: mixed_input_bad_input_test.sh <tilesim> <source dir>
set -uo pipefail

# $tilesim, $src, $work, $failures and expect "<name>" "<words>" <tilesim args...>
source "$(dirname "$0")/expect_refusal.sh"

# decode NAME TOKENS TILE_K STAGES WARPS: a bf16 x int8 decode GEMM N = K = 8192 on TOKENS-token tiles
decode() {
  echo "{\"name\":\"$1\",\"kind\":\"gemm\",\"dtype\":\"bf16\",\"b_dtype\":\"int8\",\"m\":$2,\"n\":8192,\"k\":8192,
\"layout\":{\"a\":\"row\",\"b\":\"col\"},\"tile\":{\"m\":$2,\"n\":64,\"k\":$3},\"stages\":$4,\"warps\":$5,
\"load\":\"tma\",\"persistent\":true,\"order\":\"row_major\"}" >"$work/$1.json"
}
decode t48 48 128 4 20
decode t16k256 16 256 4 20
decode t64k128 64 128 8 12
decode t16 16 128 12 20
decode t64 64 256 4 12

expect "48-token tile" "t48.json: tile: is 48x64" simulate --gpu h100 --kernel "$work/t48.json"
expect "16-token tile, two K blocks a stage" "t16k256.json: tile.k: is 256" simulate --gpu h100 --kernel "$work/t16k256.json"
expect "64-token tile, one K block a stage" "measured with 256 of K a stage" simulate --gpu h100 --kernel "$work/t64k128.json"
grep -v '"tile_k"' "$src/models/gpus/h100_sxm.json" >"$work/no_tile_k.json" # its own line in the profile
sed 's/"persistent":true/"persistent":true,"quant":{"store":"tma"}/' "$work/t16.json" >"$work/t16_tma.json"
expect "TMA store on a 64-channel tile" "t16_tma.json: quant.store: is \"tma\" on a 64-channel tile" simulate --gpu h100 --kernel "$work/t16_tma.json"
expect "profile without tile_k" "mixed_input_k_block_cycles.value.tile_k" simulate --gpu "$work/no_tile_k.json" --kernel "$work/t16.json"
for good in t16 t64; do
  if ! timeout 60 "$tilesim" simulate --gpu h100 --kernel "$work/$good.json" >/dev/null 2>&1; then
    echo "FAIL the measured stage K ($good) does not simulate"
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
