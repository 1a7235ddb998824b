#!/usr/bin/env python3
"""v17's decision rule (kernels/mixed_input/NOTES.md, v17; written before the device call).

    v17_rule.py BASE1.json AHEAD1.json BASE2.json AHEAD2.json

Each file is one mixed_input_bench run: BASE with the committed kernel, AHEAD with W loaded one
K block ahead on 128-channel tiles; the runs alternate base, ahead, base, ahead. W ahead is
adopted when the best kernel of both prefill records (int8 per channel, uint8 group 128) is
faster with it in both pairs, and no other record's best is slower with it by more than 1% in
both pairs (those records' kernels are the same SASS in both binaries, so only run noise moves
them). Prints one line per record and pair, then "ahead" or "base" as the last line.
"""
import json
import sys


def bests(path):
    records = json.load(open(path))["records"]
    return {(r["shape"], r["weight"], r["scale_group"]): r["ours_ms"] for r in records}


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: v17_rule.py BASE1.json AHEAD1.json BASE2.json AHEAD2.json")
    base1, ahead1, base2, ahead2 = (bests(p) for p in sys.argv[1:])
    adopt = True
    for key in base1:
        ratios = [ahead1[key] / base1[key], ahead2[key] / base2[key]]
        prefill = key[0].startswith("prefill")
        if prefill and not all(r < 1.0 for r in ratios):
            adopt = False
        if not prefill and all(r > 1.01 for r in ratios):
            adopt = False
        print(f"{key[0]:<16} {key[1]:<5} g{key[2]:<3} base {base1[key] * 1e3:7.1f} / {base2[key] * 1e3:7.1f} us, "
              f"ahead {ahead1[key] * 1e3:7.1f} / {ahead2[key] * 1e3:7.1f} us, "
              f"ahead/base {ratios[0]:.4f} / {ratios[1]:.4f}")
    print("ahead" if adopt else "base")


if __name__ == "__main__":
    main()
