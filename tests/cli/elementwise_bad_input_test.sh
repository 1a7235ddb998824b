#!/usr/bin/env bash
# Issue 18's bad inputs through the real CLI: element-wise specs with zero or negative element
# counts, a block that is not a power of two, an unknown operation or key, and fusion asked of
# what cannot be fused. Each must exit non-zero with one line on stderr naming the field and the fix.
#   usage: elementwise_bad_input_test.sh <tilesim>
set -uo pipefail

# $tilesim, $src, $work, $failures and expect "<name>" "<words>" <tilesim args...>
source "$(dirname "$0")/expect_refusal.sh"

# spec OP ELEMENTS EXTRA NAME
spec() { echo "{\"kind\":\"elementwise\",\"op\":\"$1\",\"elements\":$2,\"dtype\":\"fp32\",$3}" >"$work/$4.json"; }
spec add 4096 '"block":256' good
spec add 0 '"block":256' zero
spec add -4096 '"block":256' negative
spec add 4096 '"block":96' block96
spec sub 4096 '"block":256' sub
spec add 4096 '"blok":256' misspelt
cat >"$work/gemm.json" <<'JSON'
{"name":"small","kind":"gemm","dtype":"bf16","m":512,"n":512,"k":256,"tile":{"m":128,"n":128,"k":64},
 "stages":3,"warps":8,"persistent":true,"order":"row_major"}
JSON

expect "zero elements" "elements: is 0, not a positive count; give at least 1 element" simulate --kernel "$work/zero.json"
expect "negative elements" "elements: is -4096, not a positive count" simulate --kernel "$work/negative.json"
expect "block 96" "block: is 96, not a power of two from 32 to 1024" simulate --kernel "$work/block96.json"
expect "unknown op" "op: unknown operation 'sub'" simulate --kernel "$work/sub.json"
expect "misspelt key" 'blok: is not a known key; did you mean "block"?' simulate --kernel "$work/misspelt.json"
expect "whatif orders of an element-wise spec" "kind: is elementwise: its CTA steps have no launch order" whatif --kernel "$work/good.json"
expect "fusion of an element-wise spec" "kind: is not a GEMM; fusion needs the GEMM" fusion --kernel "$work/good.json"
expect "fusion with epilogue none" "there is nothing to fuse" fusion --kernel "$work/gemm.json" --epilogue none
expect "fusion with an unknown epilogue" "unknown epilogue 'bias_tanh'" fusion --kernel "$work/gemm.json" --epilogue bias_tanh
expect "fusion with block 100" "--block: 100: is not a power of two" fusion --kernel "$work/gemm.json" --block 100

# And the good spec runs.
if ! "$tilesim" simulate --kernel "$work/good.json" >"$work/out" 2>"$work/err"; then
  echo "FAIL the good element-wise spec: $(cat "$work/err")"
  failures=$((failures + 1))
fi
echo "$failures failure(s)"
((failures == 0))
