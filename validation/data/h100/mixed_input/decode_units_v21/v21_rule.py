#!/usr/bin/env python3
"""v21's decision rule (kernels/mixed_input/NOTES.md, v21; written before the device call).

    v21_rule.py BASE1.json V21_1.json BASE2.json V21_2.json

Each file is one mixed_input_bench run: BASE with the committed kernel, V21 with the 64-token
decode tiles' K loop from 16-byte W units; the runs alternate base, v21, base, v21. v21 is
adopted when the best kernel of decode_m64 (int8, per-channel scales) is faster with it in both
pairs, and no other record's best is slower with it by more than 1% in both pairs. Prints one
line per record, then "v21" or "base" as the last line.
"""
import json
import sys

TARGET = ("decode_m64", "int8", 0)


def bests(path):
    records = json.load(open(path))["records"]
    return {(r["shape"], r["weight"], r["scale_group"]): r["ours_ms"] for r in records}


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: v21_rule.py BASE1.json V21_1.json BASE2.json V21_2.json")
    base1, v21_1, base2, v21_2 = (bests(p) for p in sys.argv[1:])
    if TARGET not in base1:
        sys.exit(f"v21_rule.py: {sys.argv[1]} has no record {TARGET}; run the full mixed_input_bench")
    adopt = True
    for key in base1:
        ratios = [v21_1[key] / base1[key], v21_2[key] / base2[key]]
        if key == TARGET and not all(r < 1.0 for r in ratios):
            adopt = False
        if key != TARGET and all(r > 1.01 for r in ratios):
            adopt = False
        print(f"{key[0]:<16} {key[1]:<5} g{key[2]:<3} base {base1[key] * 1e3:7.1f} / {base2[key] * 1e3:7.1f} us, "
              f"v21 {v21_1[key] * 1e3:7.1f} / {v21_2[key] * 1e3:7.1f} us, v21/base {ratios[0]:.4f} / {ratios[1]:.4f}")
    print("v21" if adopt else "base")


if __name__ == "__main__":
    main()
