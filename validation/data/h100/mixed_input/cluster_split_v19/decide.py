#!/usr/bin/env python3
"""The decision rule of v19 (kernels/mixed_input/NOTES.md, written before the device call):

  adopted only if, in both bench runs, decode_m64's fastest 64x128x256 (cluster K split) prmt
  candidate is faster than its fastest 64x64 prmt candidate of the same run (interleaved), and no
  other record's ours / cuBLAS bf16 falls below 0.98 of the lower of its two v13 runs
  (../stage_fragments/bench_run{1,2}.json).

  decide.py RUN1.json RUN2.json REF1.json REF2.json   prints the comparison; exit 0 adopted, 1 not.
"""
import json
import sys


PAIR = "64x128x256/"  # the cluster K split's candidates in mixed_input_bench


def key(r):
    return (r["shape"], r["weight"], r["scale_group"])


def best(r, prefix):
    times = {c: t["median_ms"] for c, t in r["timings"].items() if c.startswith(prefix) and c.endswith("/prmt")}
    return min(times.items(), key=lambda kv: kv[1]) if times else (None, None)


def main(runs, refs):
    ok = True
    floor = {}
    for path in refs:
        for r in json.load(open(path))["records"]:
            floor[key(r)] = min(floor.get(key(r), 1e9), r["speedup_vs_cublas_bf16"])
    for i, path in enumerate(runs, 1):
        doc = json.load(open(path))
        for r in doc["records"]:
            if not r["all_outputs_ok"]:
                print(f"run {i} {r['shape']}: an output check failed")
                ok = False
            if r["shape"] == "decode_m64":
                pair, t_pair = best(r, PAIR)
                single, t_single = best(r, "64x64x")
                cublas = r["cublas_bf16_ms"]
                if pair is None or single is None:
                    print(f"run {i} decode_m64: no {PAIR if pair is None else '64x64'} prmt candidate")
                    ok = False
                    continue
                print(f"run {i} decode_m64: {pair} {1e3 * t_pair:.2f} us ({cublas / t_pair:.3f}x) against "
                      f"{single} {1e3 * t_single:.2f} us ({cublas / t_single:.3f}x); cuBLAS {1e3 * cublas:.2f} us")
                ok = ok and t_pair < t_single
            elif key(r) in floor:
                s, f = r["speedup_vs_cublas_bf16"], floor[key(r)]
                loses = s < 0.98 * f
                print(f"run {i} {r['shape']} {r['weight']} g{r['scale_group']}: {r['ours_config']} {s:.3f}x "
                      f"(v13 lower run {f:.3f}x){' LOSES' if loses else ''}")
                ok = ok and not loses
    print("ADOPTED" if ok else "NOT ADOPTED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:3], sys.argv[3:5]))
