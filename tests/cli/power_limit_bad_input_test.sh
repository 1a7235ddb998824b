#!/usr/bin/env bash
# Issue 15's power limits through the real CLI: a limit outside the profile's range, a limit that
# is not a number, a GPU without a power model, a published figure's bad extra.power_limit_w and
# a profile whose power section cannot hold. Each must exit non-zero with one line on stderr
# naming the field and the fix; a good limit must simulate.
#   usage: power_limit_bad_input_test.sh <tilesim> <source dir>
set -uo pipefail

# $tilesim, $src, $work, $failures and expect "<name>" "<words>" <tilesim args...>
source "$(dirname "$0")/expect_refusal.sh"

cat >"$work/gemm.json" <<'SPEC'
{"name":"g","kind":"gemm","dtype":"bf16","m":1024,"n":1024,"k":1024,"tile":{"m":128,"n":256,"k":64},"stages":4,"warps":8,"load":"tma","persistent":true,"cluster":2}
SPEC
expect "above the board's limit" "is outside b200's power range" simulate --gpu b200@1200 --kernel "$work/gemm.json"
expect "not above the clock-independent power" "above its clock-independent 456 W" simulate --gpu b200@400W --kernel "$work/gemm.json"
expect "not a number" "'fast' is not a power limit in watts" simulate --gpu b200@fast --kernel "$work/gemm.json"
expect "two limits" "is already at a power limit" simulate --gpu b200@750@700 --kernel "$work/gemm.json"
expect "no power model" "has no power model" whatif --gpus h100@700,b200@750 --kernel "$work/gemm.json"

# A published figure whose power limit is not a number, or below what the profile allows.
figure=$src/validation/data/b200/torchao_bf16_2048cube.json
mkdir -p "$work/text" "$work/low"
sed 's/"power_limit_w": 750/"power_limit_w": "750 W"/' "$figure" >"$work/text/f.json"
sed 's/"power_limit_w": 750/"power_limit_w": 300/' "$figure" >"$work/low/f.json"
expect "figure's limit as text" "extra.power_limit_w" validate --dataset "$work/text" --gpu b200 --clock profile
expect "figure's limit too low" "extra.power_limit_w: 300 W: is outside" validate --dataset "$work/low" --gpu b200 --clock profile

# A figure whose reference kernel (validate --clock reference) has a bad time or tile, and a clock
# mode that does not exist.
mkdir -p "$work/ref_time" "$work/ref_tile"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['extra']['reference']['time_ms']=-1; json.dump(d,open(sys.argv[2],'w'))" \
  "$figure" "$work/ref_time/f.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['extra']['reference']['kernel']['tile']['m']=96; json.dump(d,open(sys.argv[2],'w'))" \
  "$figure" "$work/ref_tile/f.json"
expect "reference time below zero" "extra.reference.time_ms" validate --dataset "$work/ref_time" --gpu b200 --clock reference
expect "reference tile" "extra.reference.kernel: cannot run on b200" validate --dataset "$work/ref_tile" --gpu b200 --clock reference
expect "unknown clock mode" "is not measured, profile or reference" validate --dataset "$work/ref_time" --gpu b200 --clock boost

# A profile whose clock-independent power is the whole board, or a limit without its source.
sed 's/"value": 456,/"value": 1000,/' "$src/models/gpus/b200.json" >"$work/whole.json"
expect "clock-independent power not below the limit" "power.clock_independent_w: is not below max_limit_w" \
  simulate --gpu "$work/whole.json" --kernel "$work/gemm.json"
python3 -c "import json,sys; p=json.load(open(sys.argv[1])); p['power']['max_limit_w']['source']=''; json.dump(p,open(sys.argv[2],'w'))" \
  "$src/models/gpus/b200.json" "$work/unsourced.json"
expect "unsourced limit" "power.max_limit_w.source: is empty" simulate --gpu "$work/unsourced.json" --kernel "$work/gemm.json"

if ! timeout 60 "$tilesim" simulate --gpu b200@750 --kernel "$work/gemm.json" >"$work/out" 2>&1; then
  echo "FAIL b200@750 does not simulate: $(head -c 400 "$work/out")"
  failures=$((failures + 1))
fi
exit $((failures > 0))
