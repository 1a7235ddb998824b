#!/usr/bin/env bash
# whatif's "too close to call" mark (issue 16): an order is marked ~ when its predicted time is
# within the measured order error (--order-error, a validate --json file) of the fastest; a GPU
# without validate scores gets no mark and says so; a bad scores file is one line and exit 1.
#   usage: whatif_close_call_test.sh <tilesim> <source dir>
set -uo pipefail
source "$(dirname "$0")/expect_refusal.sh"
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

cat >"$work/spec.json" <<'JSON'
{"name":"small","kind":"gemm","dtype":"bf16","m":2048,"n":2048,"k":512,"tile":{"m":128,"n":128,"k":64},
 "stages":4,"warps":12,"persistent":false,"cluster":2,"order":"row_major"}
JSON
scores() { echo "{\"gpu\":\"$1\",\"held_back\":{\"order_pairs\":7,\"order_pair_error_p90\":$2}}" >"$work/scores_$2.json"; }
orders=row_major,column_major,grouped_m:8,hilbert
# Rows: "<mark> <order> <time ms> ..."; the first is the fastest, marked *.
rows() { "$tilesim" whatif --gpu h100 --kernel "$work/spec.json" --orders $orders --threads 1 "$@" | grep -E '^[*~ ] [a-z_:0-9]+ +[0-9.]+ '; }

scores h100 10
out=$(rows --order-error "$work/scores_10.json")
[[ $(echo "$out" | head -n 1 | cut -c1) == "*" ]] || fail "error 10 (1000%): the fastest is not marked *: $out"
[[ $(echo "$out" | tail -n +2 | grep -vc '^~') == 0 ]] || fail "error 10 (1000%): an order is not marked ~: $out"
footer=$("$tilesim" whatif --gpu h100 --kernel "$work/spec.json" --orders $orders --threads 1 --order-error "$work/scores_10.json" | tail -n 1)
[[ $footer == *"within 1000.0% of the fastest"*"of 7 held-back pairs"*"scores_10.json"* ]] || fail "footer: $footer"

# The last column is the time over the fastest's, to 3 decimals. With no error, only an order
# predicted as fast as the best may be marked; with 0.5%, rows clearly inside 1.005 are marked and
# rows clearly outside are not (those within the column's rounding of 1.005 are not judged).
scores h100 0
rows --order-error "$work/scores_0.json" | awk '{ r = $NF; sub(/x$/, "", r) } NR > 1 && $1 == "~" && r >= 1.001 { bad = 1 } END { exit bad }' ||
  fail "error 0: an order slower than the fastest is marked ~"
scores h100 0.005
rows --order-error "$work/scores_0.005.json" >"$work/half.txt"
awk '{ r = $NF; sub(/x$/, "", r) } NR > 1 && ((r < 1.004 && $1 != "~") || (r > 1.006 && $1 == "~")) { bad = 1 } END { exit bad }' "$work/half.txt" ||
  fail "error 0.5%: the ~ marks do not follow 1.005 x the fastest: $(cat "$work/half.txt")"

# A GPU without committed scores: no mark, and a line saying so.
"$tilesim" whatif --gpu a100 --kernel "$work/spec.json" --orders $orders --threads 1 >"$work/a100.txt" 2>&1
grep -q "no measured order error for a100" "$work/a100.txt" || fail "a100: $(tail -n 1 "$work/a100.txt")"
grep -qE '^~' "$work/a100.txt" && fail "a100: an order is marked ~ without scores"

scores h200 0.02
expect "scores of another GPU" "gpu: is 'h200', not 'h100'" whatif --kernel "$work/spec.json" --orders $orders --order-error "$work/scores_0.02.json"
expect "missing scores file" "no_such.json" whatif --kernel "$work/spec.json" --orders $orders --order-error "$work/no_such.json"
echo '{"gpu":"h100","held_back":{"time_mape":0.1}}' >"$work/old.json"
expect "scores without order pairs" "held_back.order_pairs: is missing" whatif --kernel "$work/spec.json" --orders $orders --order-error "$work/old.json"

((failures == 0)) && echo "all whatif close-call checks passed"
exit $((failures > 0))
