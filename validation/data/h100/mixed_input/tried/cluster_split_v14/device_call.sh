#!/usr/bin/env bash
# The device call of v14 (issue 14): 64-token tiles of 128 channels whose K halves run on the two
# CTAs of a cluster, partial sums added through distributed shared memory (kernels/mixed_input/
# NOTES.md, v14). Quick check, registers and spills, full check, compute-sanitizer memcheck on the
# quick check, the benchmark twice (interleaved with cuBLAS bf16, queued from a cold L2), the
# 64-token K-block microbenchmark once (its kernels are not changed: a guard), the 7 64-token dataset
# configurations at their committed specs and with the tile fields of the new tile (64 x 128 x 128,
# 4 and 6 stages), and a per-tile trace of the N = K = 8192 decode on the new tile.
# Binaries built on the development machine (build-mixed) and carried in .carry/mixed3. Every
# output goes into one archive, out.tgz.
set -u -o pipefail
B=.carry/mixed3
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured $R/measured_n128 $R/trace /tmp/specs_n128
specs=validation/data/h100/mixed_input/specs
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
# The 64-token specs with the new tile's fields (tile n 128, k 128) at 4 and 6 stages.
python3 - "$specs" /tmp/specs_n128 <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(sys.argv[1] + "/dec64_*.json") + glob.glob(sys.argv[1] + "/zipf64_*.json")):
    for stages in (4, 6):
        s = json.load(open(path))
        s["name"] = s["name"].replace("_t64_", "_t64n128s%d_" % stages)
        s["tile"] = {"m": 64, "n": 128, "k": 128}
        s["stages"] = stages
        json.dump(s, open(os.path.join(sys.argv[2], s["name"] + ".json"), "w"), indent=1)
PY
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check $(date -u +%T)"
  timeout 120 $B/mixed_input_check --quick >$R/check_quick.log 2>&1; check_rc=$?
  echo "check exit $check_rc"; grep "FAIL" $R/check_quick.log | head; tail -n 1 $R/check_quick.log
  echo "== registers and spills $(date -u +%T)"
  cuobjdump --dump-resource-usage $B/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >$R/resource_usage.txt
  cat $R/resource_usage.txt
  cuobjdump -sass $B/mixed_input_check 2>/dev/null | gzip >$R/sass.txt.gz
  echo "== full check $(date -u +%T)"
  timeout 240 $B/mixed_input_check >$R/check_full.log 2>&1; full_rc=$?
  echo "full check exit $full_rc"; grep "FAIL" $R/check_full.log | head; tail -n 1 $R/check_full.log
  echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
  timeout 200 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >$R/sanitizer.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer.log) clean summary line(s)"; tail -n 2 $R/sanitizer.log
  if [ $check_rc -eq 0 ] && [ $full_rc -eq 0 ]; then
    for run in 1 2; do
      echo "== bench run $run $(date -u +%T)"
      timeout 200 $B/mixed_input_bench --out $R/bench_run$run.json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --reps 30 (kernels/mixed_input v14: 64x128 tiles, K halves on a cluster's two CTAs)" >$R/bench_run$run.log 2>&1
      cat $R/bench_run$run.log
    done
    echo "== block rate, 64-token tiles (unchanged kernels) $(date -u +%T)"
    timeout 60 $B/mixed_input_block_rate --reps 50 --tiles 64 >$R/block_rate_t64.json 2>&1
    echo "== dataset, 64-token configurations: committed specs, then the 64 x 128 tile $(date -u +%T)"
    for spec in $specs/dec64_*.json $specs/zipf64_*.json /tmp/specs_n128/*.json; do
      id="$(basename "$spec" .json)"
      case "$spec" in /tmp/*) dir=$R/measured_n128 ;; *) dir=$R/measured ;; esac
      $B/tilesim-measure --kernel "$spec" --out "$dir/$id.json" --runs 25 >"$dir/$id.log" 2>&1 || echo "FAILED $id: $(tail -n 1 "$dir/$id.log")"
    done
    cp -r /tmp/specs_n128 $R/specs_n128
    python3 - $R <<'PY'
import glob, json, sys
for d in ("measured", "measured_n128"):
    for p in sorted(glob.glob(sys.argv[1] + "/" + d + "/*.json")):
        try:
            r = json.load(open(p))
            print(d, p.split("/")[-1], "%.2f us" % (1e3 * r["time_ms"]), "dram %.1f MB" % (r["dram_read_bytes"] / 1e6))
        except Exception as e:
            print(d, p, "unreadable", e)
PY
    echo "== trace, N = K = 8192 decode on 64 x 128 s4 $(date -u +%T)"
    id=dec64_8192_int8_prmt_t64n128s4_p_row_major
    $B/tilesim-measure --kernel "/tmp/specs_n128/$id.json" --out "$R/trace/$id.json" --runs 10 --trace --trace-out "$R/trace/$id.timeline.json" >"$R/trace/$id.log" 2>&1 || echo "FAILED trace $id: $(tail -n 1 "$R/trace/$id.log")"
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
