#!/usr/bin/env bash
# Issue 20's bad quantiser inputs through the real CLI: a quantised dimension that is not a
# multiple of 32, colwise columns that are not a multiple of 8, an unsupported input or element
# type, an unknown scale rule or key, and whatif asked for launch orders; and bad MXFP8 GEMM specs:
# K not a multiple of 32, a scale block other than 32, an unsupported element type or scheme,
# block_scale on a bf16 GEMM, the transposed and xpass schemes on a tile their kernels do not run or on
# a ring their shared memory does not hold, a profile without the xpass stage, and a profile whose
# transposed stage figures do not pair with their tiles. Each must exit non-zero with one line on stderr naming the field and
# the fix.
#   usage: mxfp8_bad_input_test.sh <tilesim> <source dir>
set -uo pipefail

# $tilesim, $src, $work, $failures and expect "<name>" "<words>" <tilesim args...>
source "$(dirname "$0")/expect_refusal.sh"

# spec NAME FIELDS
spec() { echo "{\"kind\":\"mxfp8_quantize\",$2}" >"$work/$1.json"; }
spec cols1000 '"rows":256,"cols":1000,"dtype":"bf16"'
spec rows100 '"rows":100,"cols":1024,"dtype":"bf16","axis":"colwise"'
spec cols1020 '"rows":128,"cols":1020,"dtype":"bf16","axis":"colwise"'
spec fp16 '"rows":256,"cols":1024,"dtype":"fp16"'
spec e2m1 '"rows":256,"cols":1024,"dtype":"bf16","element":"e2m1"'
spec rule '"rows":256,"cols":1024,"dtype":"bf16","scale_rule":"nearest"'
spec misspelt '"rows":256,"cols":1024,"dtype":"bf16","axsi":"colwise"'
spec good '"rows":256,"cols":1024,"dtype":"bf16"'

expect "cols not a multiple of 32" "cols: is 1000, not a multiple of 32" simulate --gpu h100 --kernel "$work/cols1000.json"
expect "colwise rows not a multiple of 32" "rows: is 100, not a multiple of 32" simulate --gpu h100 --kernel "$work/rows100.json"
expect "colwise cols not a multiple of 8" "cols: is 1020, not a multiple of 8" simulate --gpu h100 --kernel "$work/cols1020.json"
expect "fp16 input" "dtype: is fp16" simulate --gpu h100 --kernel "$work/fp16.json"
expect "unknown element type" "element: unknown value 'e2m1'" simulate --gpu h100 --kernel "$work/e2m1.json"
expect "unknown scale rule" "scale_rule: unknown value 'nearest'" simulate --gpu h100 --kernel "$work/rule.json"
expect "misspelt key" "axsi" simulate --gpu h100 --kernel "$work/misspelt.json"
expect "whatif orders" "kind: is mxfp8_quantize" whatif --gpu h100 --kernel "$work/good.json"
# gemm NAME FIELDS: a small MXFP8 grouped GEMM with FIELDS (later keys of its own) and its block_scale
gemm() {
  echo "{\"kind\":\"grouped_gemm\",\"experts\":[256,128],\"n\":256,\"layout\":{\"a\":\"row\",\"b\":\"col\"},
\"tile\":{\"m\":128,\"n\":128,\"k\":128},\"stages\":4,\"warps\":12,\"persistent\":true,\"cluster\":2,$2}" >"$work/$1.json"
}
gemm k1000 '"dtype":"mxfp8","k":1000'
gemm block16 '"dtype":"mxfp8","k":1024,"block_scale":{"block":16}'
gemm e2m1gemm '"dtype":"mxfp8","k":1024,"block_scale":{"element":"e2m1"}'
gemm scheme '"dtype":"mxfp8","k":1024,"block_scale":{"scheme":"exact"}'
gemm bf16scaled '"dtype":"bf16","k":1024,"block_scale":{"scheme":"promote"}'
gemm goodgemm '"dtype":"mxfp8","k":1024,"block_scale":{"scheme":"promote"}'
# transposed TILE_M TILE_N STAGES [SCHEME]: the transposed scheme's spec (one producer and two consumer
# warpgroups), or xpass's (the same kernel on X dequantised by a pass)
transposed() {
  echo "{\"kind\":\"grouped_gemm\",\"dtype\":\"mxfp8\",\"experts\":[256,128],\"n\":256,\"k\":1024,
\"layout\":{\"a\":\"row\",\"b\":\"col\"},\"tile\":{\"m\":$1,\"n\":$2,\"k\":128},\"stages\":$3,\"warps\":12,
\"persistent\":true,\"cluster\":1,\"block_scale\":{\"scheme\":\"${4:-transposed}\"}}" >"$work/${4:-transposed}_$1x$2_s$3.json"
}
transposed 64 128 4
transposed 128 128 5
transposed 128 128 4
transposed 64 64 4 xpass
transposed 128 128 5 xpass
transposed 128 128 4 xpass
transposed 64 64 4 xpass_f16
transposed 128 128 4 xpass_f16
transposed 16 128 8 xpass_f16
transposed 32 128 8 xpass_f16
transposed 128 256 3 xpass_f16
transposed 128 256 4 xpass_f16
expect "gemm k not a multiple of 32" "k: is 1000, not a multiple of 32" simulate --gpu h100 --kernel "$work/k1000.json"
expect "gemm scale block 16" "block_scale.block: is 16" simulate --gpu h100 --kernel "$work/block16.json"
expect "gemm element e2m1" "block_scale.element: unknown value 'e2m1'" simulate --gpu h100 --kernel "$work/e2m1gemm.json"
expect "gemm unknown scheme" "block_scale.scheme: unknown value 'exact'" simulate --gpu h100 --kernel "$work/scheme.json"
expect "block_scale on bf16" "block_scale: is for GEMMs with MXFP8 operands" simulate --gpu h100 --kernel "$work/bf16scaled.json"
expect "transposed scheme on a 64 x 128 tile" "tile: is 64x128x128, which the transposed scheme's kernel is not built for" simulate --gpu h100 --kernel "$work/transposed_64x128_s4.json"
expect "transposed 128 x 128 tile, 5 stages" "stages: 5 stages need 263168 bytes" simulate --gpu h100 --kernel "$work/transposed_128x128_s5.json"
expect "xpass scheme on a 64 x 64 tile" "tile: is 64x64x128, which the xpass scheme's kernel is not built for" simulate --gpu h100 --kernel "$work/xpass_64x64_s4.json"
expect "xpass 128 x 128 tile, 5 stages" "stages: 5 stages of a 128x128x128 tile need 246784 bytes" simulate --gpu h100 --kernel "$work/xpass_128x128_s5.json"
sed 's/, "xpass": 953.1//' "$src/models/gpus/h100_sxm.json" >"$work/no_xpass_stage.json"
expect "profile without the xpass stage" "mxfp8_stage_ns: has no stage cost for the xpass scheme" simulate --gpu "$work/no_xpass_stage.json" --kernel "$work/xpass_128x128_s4.json"
expect "xpass_f16 scheme on a 64 x 64 tile" "tile: is 64x64x128, which the xpass_f16 scheme's kernel is not built for" simulate --gpu h100 --kernel "$work/xpass_f16_64x64_s4.json"
sed 's/, "xpass_f16": 627.2//' "$src/models/gpus/h100_sxm.json" >"$work/no_xpass_f16_stage.json"
expect "profile without the xpass_f16 stage" "mxfp8_stage_ns: has no stage cost for the xpass_f16 scheme" simulate --gpu "$work/no_xpass_f16_stage.json" --kernel "$work/xpass_f16_128x128_s4.json"
expect "xpass_f16 32 x 128 tile, its stage not measured" "mxfp8_stage_ns: has no stage cost for the xpass_f16 scheme at tile 32x128" simulate --gpu h100 --kernel "$work/xpass_f16_32x128_s8.json"
expect "xpass_f16 128 x 256 tile, 4 stages" "stages: 4 stages of a 128x256x128 tile need 263168 bytes" simulate --gpu h100 --kernel "$work/xpass_f16_128x256_s4.json"
sed 's/, "xpass_f16_n256": 1371.3//' "$src/models/gpus/h100_sxm.json" >"$work/no_xpass_f16_n256_stage.json"
expect "profile without the xpass_f16 128 x 256 stage" "mxfp8_stage_ns: has no stage cost for the xpass_f16 scheme at tile 128x256" simulate --gpu "$work/no_xpass_f16_n256_stage.json" --kernel "$work/xpass_f16_128x256_s3.json"
# A profile whose 128 x 128 stage figure lost its channel count: the lists no longer pair up.
sed 's/"transposed_tile_n": \[64, 64, 64, 64, 128\]/"transposed_tile_n": [64, 128]/' "$src/models/gpus/h100_sxm.json" >"$work/short_tile_n.json"
expect "profile with a short transposed_tile_n" "mxfp8_stage_ns.value.transposed_tile_n: has 2 entries for 5 transposed_tile_m" simulate --gpu "$work/short_tile_n.json" --kernel "$work/transposed_128x128_s4.json"
if ! timeout 120 "$tilesim" simulate --gpu h100 --kernel "$work/transposed_128x128_s4.json" >/dev/null 2>&1; then
  echo "FAIL the transposed 128 x 128 spec at 4 stages does not simulate"
  failures=$((failures + 1))
fi
if ! timeout 120 "$tilesim" simulate --gpu h100 --kernel "$work/xpass_128x128_s4.json" >/dev/null 2>&1; then
  echo "FAIL the xpass 128 x 128 spec at 4 stages does not simulate"
  failures=$((failures + 1))
fi
for spec in xpass_f16_128x128_s4 xpass_f16_16x128_s8 xpass_f16_128x256_s3; do
  if ! timeout 120 "$tilesim" simulate --gpu h100 --kernel "$work/$spec.json" >/dev/null 2>&1; then
    echo "FAIL the $spec spec does not simulate"
    failures=$((failures + 1))
  fi
done
if ! timeout 120 "$tilesim" simulate --gpu h100 --kernel "$work/goodgemm.json" >/dev/null 2>&1; then
  echo "FAIL the good MXFP8 GEMM spec does not simulate"
  failures=$((failures + 1))
fi
if ! timeout 60 "$tilesim" simulate --gpu h100 --kernel "$work/good.json" >/dev/null 2>&1; then
  echo "FAIL the good spec does not simulate"
  failures=$((failures + 1))
fi
exit $((failures > 0))
