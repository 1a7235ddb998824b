#!/usr/bin/env bash
# The device call of v15 (issue 14): 128-channel (prefill) tiles in clusters of two that share
# their X (row-major pairs) or W tile by TMA multicast (kernels/mixed_input/NOTES.md, v15, written
# before this call). Quick check, registers and spills, full check, compute-sanitizer memcheck on
# the quick check, the benchmark twice (every shape; prefill alone and paired, interleaved with
# cuBLAS bf16, queued from a cold L2), the K-block microbenchmark of the 128-channel tiles alone and
# paired (three runs each, alternating), the dataset's 20 prefill configurations at their
# committed specs and paired (cluster 2), each pair of twins one after the other, and Nsight
# Compute's throughput sections for the 224-token tile alone and paired.
# Binaries built on the development machine (build-mixed, CUDA 13.0, sm_90a) and carried in
# .carry/mixed. Every output goes into one archive, out.tgz. Written as validation/data/h100/
# mixed_input/pairs_v15/device_call.sh and run from there (moved here after, with the patch).
set -u -o pipefail
B=.carry/mixed
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured $R/measured_c2 /tmp/specs_c2
specs=validation/data/h100/mixed_input/specs
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
# The prefill specs paired: cluster 2, "_p_" -> "_pc2_" ("_np_" -> "_npc2_") in the name.
python3 - "$specs" /tmp/specs_c2 <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(sys.argv[1] + "/pre*.json")):
    s = json.load(open(path))
    s["name"] = s["name"].replace("_p_", "_pc2_").replace("_np_", "_npc2_")
    s["cluster"] = 2
    json.dump(s, open(os.path.join(sys.argv[2], s["name"] + ".json"), "w"), indent=1)
PY
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check $(date -u +%T)"
  timeout 180 $B/mixed_input_check --quick >$R/check_quick.log 2>&1; check_rc=$?
  echo "check exit $check_rc"; grep "FAIL" $R/check_quick.log | head; tail -n 1 $R/check_quick.log
  echo "== registers and spills $(date -u +%T)"
  cuobjdump --dump-resource-usage $B/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >$R/resource_usage.txt
  cat $R/resource_usage.txt
  echo "== full check $(date -u +%T)"
  timeout 300 $B/mixed_input_check >$R/check_full.log 2>&1; full_rc=$?
  echo "full check exit $full_rc"; grep "FAIL" $R/check_full.log | head; tail -n 1 $R/check_full.log
  echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
  timeout 300 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >$R/sanitizer.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer.log) clean summary line(s)"; tail -n 2 $R/sanitizer.log
  if [ $check_rc -eq 0 ] && [ $full_rc -eq 0 ]; then
    for run in 1 2; do
      echo "== bench run $run $(date -u +%T)"
      timeout 300 $B/mixed_input_bench --out $R/bench_run$run.json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --reps 30 (kernels/mixed_input v15: 128-channel tiles alone and in pairs sharing X or W by multicast)" >$R/bench_run$run.log 2>&1
      cat $R/bench_run$run.log
    done
    echo "== block rate, 128-channel tiles alone and paired $(date -u +%T)"
    for run in 1 2 3; do
      for c in 1 2; do
        timeout 120 $B/mixed_input_block_rate --reps 50 --tiles 128,224,256 --cluster $c >$R/block_rate_c${c}_run$run.json 2>&1
      done
    done
    echo "== dataset, prefill: committed spec, then paired $(date -u +%T)"
    for spec in $specs/pre*.json; do
      id="$(basename "$spec" .json)"
      twin="$(echo "$id" | sed 's/_p_/_pc2_/; s/_np_/_npc2_/')"
      $B/tilesim-measure --kernel "$spec" --out "$R/measured/$id.json" --runs 25 >"$R/measured/$id.log" 2>&1 || echo "FAILED $id: $(tail -n 1 "$R/measured/$id.log")"
      $B/tilesim-measure --kernel "/tmp/specs_c2/$twin.json" --out "$R/measured_c2/$twin.json" --runs 25 >"$R/measured_c2/$twin.log" 2>&1 || echo "FAILED $twin: $(tail -n 1 "$R/measured_c2/$twin.log")"
    done
    cp -r /tmp/specs_c2 $R/specs_c2
    python3 - $R <<'PY'
import glob, json, sys
for p in sorted(glob.glob(sys.argv[1] + "/measured/*.json")):
    q = p.replace("/measured/", "/measured_c2/").replace("_p_", "_pc2_").replace("_np_", "_npc2_")
    try:
        a, b = json.load(open(p)), json.load(open(q))
        print(p.split("/")[-1], "alone %.2f us" % (1e3 * a["time_ms"]), "paired %.2f us" % (1e3 * b["time_ms"]),
              "ratio %.3f" % (b["time_ms"] / a["time_ms"]), "l2 hit %.3f / %.3f" % (a.get("l2_hit_rate", -1), b.get("l2_hit_rate", -1)))
    except Exception as e:
        print(p, "unreadable", e)
PY
    echo "== Nsight Compute, 224-token tile alone and paired (row-major, X shared) $(date -u +%T)"
    if command -v ncu >/dev/null; then
      for c in 1 2; do
        timeout 150 ncu --kernel-name-base mangled -k "regex:Li224ELi128ELi1ELi${c}ELNS0_7dequant10ConversionE0E" \
          --launch-skip 1 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section ComputeWorkloadAnalysis --section WarpStateStats \
          $B/mixed_input_bench --only prefill --reps 1 --out /tmp/ncu_bench.json >$R/ncu_224_c$c.txt 2>&1
        echo "ncu c$c exit $?"; grep -i "duration\|L2 Cache Throughput\|Memory Throughput\|SM Busy\|Issue Slots Busy\|Compute (SM) Throughput" $R/ncu_224_c$c.txt | head -12
      done
    else
      echo "no ncu on this machine"
    fi
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
