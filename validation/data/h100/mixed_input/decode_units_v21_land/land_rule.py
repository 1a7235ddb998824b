#!/usr/bin/env python3
"""v21's landing rule (kernels/mixed_input/NOTES.md, "v21 landed?"; written before the call).

    land_rule.py BASE1.json V21_1.json BASE2.json V21_2.json

Each file is one mixed_input_bench run, alternating base, v21, base, v21 (both builds the binaries
v21's call ran). v21 is adopted as an improvement when
  (a) decode_m64 int8's best is faster in each v21 run than in both base runs, and
  (c) none of the kernels v21 changed (the 64-token prmt tiles, all in decode_m64 int8:
      64x64x128/s4, 64x64x128/s8, 64x64x256/s4) is, in either v21 run, slower than both base
      runs by more than 1%.
The 1.6x bar (b) is judged separately and printed as it is; it does not decide adoption.
Records whose kernels are the same SASS in both builds are printed, not ruled on.
Prints one line per record and per changed kernel, then "v21" or "base" as the last line.
"""
import json
import sys

TARGET = ("decode_m64", "int8", 0)
CHANGED = ("64x64x128/s4/prmt", "64x64x128/s8/prmt", "64x64x256/s4/prmt")
BAR = 1.6


def records(path):
    return {(r["shape"], r["weight"], r["scale_group"]): r for r in json.load(open(path))["records"]}


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: land_rule.py BASE1.json V21_1.json BASE2.json V21_2.json")
    b1, v1, b2, v2 = (records(p) for p in sys.argv[1:])
    if TARGET not in b1 or TARGET not in v1:
        sys.exit(f"land_rule.py: {sys.argv[1]} or {sys.argv[2]} has no record {TARGET}; run the full mixed_input_bench")
    adopt = True
    for key in b1:
        base = [b1[key]["ours_ms"] * 1e3, b2[key]["ours_ms"] * 1e3]
        new = [v1[key]["ours_ms"] * 1e3, v2[key]["ours_ms"] * 1e3]
        cub = [r[key]["cublas_bf16_ms"] * 1e3 for r in (b1, v1, b2, v2)]
        line = (f"{key[0]:<16} {key[1]:<5} g{key[2]:<3} best base {base[0]:6.2f} / {base[1]:6.2f} us, "
                f"v21 {new[0]:6.2f} / {new[1]:6.2f} us ({v1[key]['ours_config']}, {v2[key]['ours_config']}); "
                f"cuBLAS base {cub[0]:.2f} / {cub[2]:.2f}, v21 {cub[1]:.2f} / {cub[3]:.2f}")
        if key != TARGET:
            print(line + "  [same SASS: reported]")
            continue
        speedup = [v1[key]["speedup_vs_cublas_bf16"], v2[key]["speedup_vs_cublas_bf16"]]
        faster = all(n < min(base) for n in new)
        bar = all(s >= BAR for s in speedup)
        print(line + f"; v21 {speedup[0]:.3f}x / {speedup[1]:.3f}x cuBLAS  (a) {'met' if faster else 'NOT met'}"
              f"  bar {BAR}x in both v21 runs: {'met' if bar else 'not met'} (reported, not ruled on)")
        adopt = adopt and faster
        for name in CHANGED:
            bt = [r[key]["timings"][name]["median_ms"] * 1e3 for r in (b1, b2)]
            vt = [r[key]["timings"][name]["median_ms"] * 1e3 for r in (v1, v2)]
            lost = any(t > 1.01 * max(bt) for t in vt)
            print(f"  changed {name:<18} base {bt[0]:6.2f} / {bt[1]:6.2f} us, v21 {vt[0]:6.2f} / {vt[1]:6.2f} us"
                  f"  (c) {'LOST' if lost else 'ok'}")
            adopt = adopt and not lost
    print("v21" if adopt else "base")


if __name__ == "__main__":
    main()
